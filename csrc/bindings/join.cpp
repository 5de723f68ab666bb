// Joining, reordering, triangular/diagonal and grid ops: functions and Tensor methods.
#include "api/join.h"
#include "bindings/list_args.h"

namespace ember {

void init_join(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  auto cat_fn = [](py::handle tensors, int64_t dim, py::handle out) {
    return cat(tensor_list(tensors, "cat"), dim, opt_tensor(out));
  };
  // PyTorch accepts the NumPy spelling `axis` for `dim` in all three names.
  for (const char* name : {"cat", "concat", "concatenate"}) {
    m.def(name, cat_fn, py::arg("tensors"), py::arg("dim") = 0, py::kw_only(),
          py::arg("out") = py::none());
    m.def(name, cat_fn, py::arg("tensors"), py::kw_only(), py::arg("axis"),
          py::arg("out") = py::none());
  }
  auto stack_fn = [](py::handle tensors, int64_t dim, py::handle out) {
    return stack(tensor_list(tensors, "stack"), dim, opt_tensor(out));
  };
  m.def("stack", stack_fn, py::arg("tensors"), py::arg("dim") = 0, py::kw_only(),
        py::arg("out") = py::none());
  m.def("stack", stack_fn, py::arg("tensors"), py::kw_only(), py::arg("axis"),
        py::arg("out") = py::none());
  using StackFn = Tensor (*)(const std::vector<Tensor>&, const Tensor&);
  const std::pair<const char*, StackFn> stacks[] = {{"hstack", hstack},
                                                    {"vstack", vstack},
                                                    {"row_stack", vstack},
                                                    {"dstack", dstack},
                                                    {"column_stack", column_stack}};
  for (const auto& [name, fn] : stacks) {
    m.def(
        name,
        [name = name, fn = fn](py::handle tensors, py::handle out) {
          return fn(tensor_list(tensors, name), opt_tensor(out));
        },
        py::arg("tensors"), py::kw_only(), py::arg("out") = py::none());
  }

  // flip(input, dims) / Tensor.flip(*dims)
  m.def(
      "flip",
      [](const Tensor& t, py::handle dims) {
        return flip(t, parse_int_sequence(dims, "flip", "dims"));
      },
      py::arg("input"), py::arg("dims"));
  cls.def("flip",
          [](const Tensor& t, py::args dims) { return flip(t, parse_shape(dims, "flip")); });
  for (auto [name, fn] :
       {std::pair<const char*, Tensor (*)(const Tensor&)>{"fliplr", fliplr}, {"flipud", flipud}}) {
    m.def(name, fn, py::arg("input"));
    cls.def(name, fn);
  }
  auto roll_fn = [](const Tensor& t, py::handle shifts, py::handle dims) {
    DimVector d;
    if (!dims.is_none()) d = parse_int_sequence(dims, "roll", "dims");
    return roll(t, parse_int_sequence(shifts, "roll", "shifts"), d);
  };
  m.def("roll", roll_fn, py::arg("input"), py::arg("shifts"), py::arg("dims") = py::none());
  cls.def("roll", roll_fn, py::arg("shifts"), py::arg("dims") = py::none());
  auto rot90_fn = [](const Tensor& t, int64_t k, py::handle dims) {
    return rot90(t, k, parse_int_sequence(dims, "rot90", "dims"));
  };
  m.def("rot90", rot90_fn, py::arg("input"), py::arg("k") = 1,
        py::arg("dims") = py::make_tuple(0, 1));
  cls.def("rot90", rot90_fn, py::arg("k") = 1, py::arg("dims") = py::make_tuple(0, 1));
  cls.def("repeat",
          [](const Tensor& t, py::args sizes) { return repeat(t, parse_shape(sizes, "repeat")); });
  m.def(
      "tile",
      [](const Tensor& t, py::handle dims) {
        return tile(t, parse_int_sequence(dims, "tile", "dims"));
      },
      py::arg("input"), py::arg("dims"));
  cls.def("tile",
          [](const Tensor& t, py::args dims) { return tile(t, parse_shape(dims, "tile")); });

  // repeat_interleave(input, repeats, dim=None, *, output_size=None) and the one-argument form
  // repeat_interleave(repeats, *, output_size=None).
  auto ri = [](const Tensor& t, py::handle repeats, py::handle dim, py::handle output_size) {
    if (is_tensor(repeats)) {
      return repeat_interleave(t, repeats.cast<Tensor>(), opt_int(dim, "repeat_interleave"),
                               opt_int(output_size, "repeat_interleave", "output_size"));
    }
    return repeat_interleave(t, parse_int(repeats, "repeat_interleave", "repeats"),
                             opt_int(dim, "repeat_interleave"),
                             opt_int(output_size, "repeat_interleave", "output_size"));
  };
  m.def(
      "repeat_interleave",
      [ri](const Tensor& t, py::handle repeats, py::handle dim, py::handle output_size) {
        if (repeats.is_none())
          return repeat_interleave(t, opt_int(output_size, "repeat_interleave", "output_size"));
        return ri(t, repeats, dim, output_size);
      },
      py::arg("input"), py::arg("repeats") = py::none(), py::arg("dim") = py::none(), py::kw_only(),
      py::arg("output_size") = py::none());
  cls.def("repeat_interleave", ri, py::arg("repeats"), py::arg("dim") = py::none(), py::kw_only(),
          py::arg("output_size") = py::none());

  for (bool lower : {true, false}) {
    const char* name = lower ? "tril" : "triu";
    auto fn = lower ? &tril : &triu;
    auto fn_ = lower ? &tril_ : &triu_;
    m.def(
        name,
        [fn](const Tensor& t, int64_t diagonal, py::handle out) {
          return fn(t, diagonal, opt_tensor(out));
        },
        py::arg("input"), py::arg("diagonal") = 0, py::kw_only(), py::arg("out") = py::none());
    cls.def(
        name, [fn](const Tensor& t, int64_t diagonal) { return fn(t, diagonal, Tensor()); },
        py::arg("diagonal") = 0);
    cls.def(
        lower ? "tril_" : "triu_",
        [fn_](py::object self, int64_t diagonal) {
          Tensor t = self.cast<Tensor>();
          fn_(t, diagonal);
          return self;
        },
        py::arg("diagonal") = 0);
  }
  m.def(
      "diag",
      [](const Tensor& t, int64_t diagonal, py::handle out) {
        return diag(t, diagonal, opt_tensor(out));
      },
      py::arg("input"), py::arg("diagonal") = 0, py::kw_only(), py::arg("out") = py::none());
  cls.def(
      "diag", [](const Tensor& t, int64_t diagonal) { return diag(t, diagonal); },
      py::arg("diagonal") = 0);
  auto diag_embed_fn = [](const Tensor& t, int64_t offset, int64_t d1, int64_t d2) {
    return diag_embed(t, offset, d1, d2);
  };
  m.def("diag_embed", diag_embed_fn, py::arg("input"), py::arg("offset") = 0, py::arg("dim1") = -2,
        py::arg("dim2") = -1);
  cls.def("diag_embed", diag_embed_fn, py::arg("offset") = 0, py::arg("dim1") = -2,
          py::arg("dim2") = -1);
  auto diagflat_fn = [](const Tensor& t, int64_t offset) { return diagflat(t, offset); };
  m.def("diagflat", diagflat_fn, py::arg("input"), py::arg("offset") = 0);
  cls.def("diagflat", diagflat_fn, py::arg("offset") = 0);
  m.def("trace", &trace, py::arg("input"));
  cls.def("trace", &trace);

  m.def(
      "meshgrid",
      [](py::args tensors, py::handle indexing) {
        std::string idx = indexing.is_none() ? "ij" : indexing.cast<std::string>();
        std::vector<Tensor> grids = meshgrid(tensor_varargs(tensors, 0, "meshgrid"), idx);
        return py::tuple(py::cast(grids));
      },
      py::arg("indexing") = py::none());
  m.def("cartesian_prod", [](py::args tensors) {
    return cartesian_prod(tensor_varargs(tensors, 0, "cartesian_prod"));
  });
  m.def(
      "combinations",
      [](const Tensor& t, int64_t r, bool with_replacement) {
        return combinations(t, r, with_replacement);
      },
      py::arg("input"), py::arg("r") = 2, py::arg("with_replacement") = false);
}

}  // namespace ember
