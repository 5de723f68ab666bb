// More views: unflatten, t / T / mT / H / mH / adjoint, movedim, broadcast_to,
// broadcast_tensors, diagonal, unfold, and the splitting ops (unbind, split, chunk,
// tensor_split, hsplit / vsplit / dsplit). Argument conversion only.
#include "api/views.h"
#include "bindings/pybind_ember.h"

namespace ember {

namespace {

py::tuple to_tuple(const std::vector<Tensor>& ts) {
  py::tuple t(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) t[i] = py::cast(ts[i]);
  return t;
}

bool is_int(py::handle h) {
  return PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr());
}

// split(split_size_or_sections, dim): an int size or a sequence of sizes.
py::tuple split_dispatch(const Tensor& t, py::handle sizes, int64_t dim) {
  if (is_int(sizes)) return to_tuple(split(t, sizes.cast<int64_t>(), dim));
  return to_tuple(split_with_sizes(t, parse_int_sequence(sizes, "split", "split_size"), dim));
}

// tensor_split(indices_or_sections, dim): an int, a sequence of ints or a 0-d / 1-d tensor.
py::tuple tensor_split_dispatch(const Tensor& t, py::handle ios, int64_t dim) {
  if (is_tensor(ios)) return to_tuple(tensor_split(t, ios.cast<Tensor>(), dim));
  if (is_int(ios)) return to_tuple(tensor_split(t, ios.cast<int64_t>(), dim));
  return to_tuple(tensor_split_indices(t, parse_int_sequence(ios, "tensor_split", "indices"), dim));
}

py::tuple tensor_split_kw(const Tensor& t, py::handle ios, int64_t dim, py::handle sections,
                          py::handle indices, py::handle tensor_ios) {
  py::handle which = ios;
  for (py::handle h : {sections, indices, tensor_ios}) {
    if (!h.is_none()) which = h;
  }
  if (which.is_none()) {
    throw py::type_error("[tensor_split] tensor_split() missing argument 'indices_or_sections'");
  }
  return tensor_split_dispatch(t, which, dim);
}

py::tuple directional_dispatch(const Tensor& t, char which, py::handle ios) {
  if (is_int(ios)) return to_tuple(directional_split(t, which, ios.cast<int64_t>()));
  const char* name = which == 'h' ? "hsplit" : which == 'v' ? "vsplit" : "dsplit";
  return to_tuple(directional_split_indices(t, which, parse_int_sequence(ios, name, "indices")));
}

// movedim's source / destination: an int or a sequence of ints.
DimVector int_or_seq(py::handle h, const char* what) {
  return parse_int_sequence(h, "movedim", what);
}

}  // namespace

void init_view_extras(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  using py::arg;

  auto unflatten_fn = [](const Tensor& t, int64_t dim, py::handle sizes) {
    return unflatten(t, dim, parse_int_sequence(sizes, "unflatten", "sizes"));
  };
  m.def("unflatten", unflatten_fn, arg("input"), arg("dim"), arg("sizes"));
  cls.def("unflatten", unflatten_fn, arg("dim"), arg("sizes"));

  m.def(
      "t", [](const Tensor& t) { return matrix_t(t); }, arg("input"));
  cls.def("t", [](const Tensor& t) { return matrix_t(t); });
  cls.def("t_", [](py::object self) {
    Tensor t = self.cast<Tensor>();
    matrix_t_(t);
    return self;
  });
  cls.def_property_readonly("T", [](const Tensor& t) { return numpy_T(t); });
  cls.def_property_readonly("mT", [](const Tensor& t) { return mT(t); });
  cls.def_property_readonly("H", [](const Tensor& t) { return matrix_H(t); });
  cls.def_property_readonly("mH", [](const Tensor& t) { return mH(t); });
  m.def(
      "adjoint", [](const Tensor& t) { return adjoint(t); }, arg("input"));
  cls.def("adjoint", [](const Tensor& t) { return adjoint(t); });

  auto movedim_fn = [](const Tensor& t, py::handle source, py::handle destination) {
    return movedim(t, int_or_seq(source, "source"), int_or_seq(destination, "destination"));
  };
  for (const char* name : {"movedim", "moveaxis"}) {
    m.def(name, movedim_fn, arg("input"), arg("source"), arg("destination"));
    cls.def(name, movedim_fn, arg("source"), arg("destination"));
  }

  auto broadcast_to_fn = [](const Tensor& t, py::handle size) {
    return broadcast_to(t, parse_int_sequence(size, "broadcast_to", "size"));
  };
  m.def("broadcast_to", broadcast_to_fn, arg("input"), arg("size"));
  cls.def("broadcast_to", broadcast_to_fn, arg("size"));
  m.def("broadcast_tensors", [](py::args tensors) {
    std::vector<Tensor> ts;
    // broadcast_tensors(a, b) or broadcast_tensors([a, b]) (as torch accepts both).
    if (tensors.size() == 1 && !is_tensor(tensors[0])) {
      for (py::handle h : py::reinterpret_borrow<py::sequence>(tensors[0])) {
        ts.push_back(h.cast<Tensor>());
      }
    } else {
      for (py::handle h : tensors) ts.push_back(h.cast<Tensor>());
    }
    return to_tuple(broadcast_tensors(ts));
  });

  auto diagonal_fn = [](const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
    return diagonal(t, offset, dim1, dim2);
  };
  m.def("diagonal", diagonal_fn, arg("input"), arg("offset") = 0, arg("dim1") = 0, arg("dim2") = 1);
  cls.def("diagonal", diagonal_fn, arg("offset") = 0, arg("dim1") = 0, arg("dim2") = 1);

  cls.def(
      "unfold",
      [](const Tensor& t, int64_t dimension, int64_t size, int64_t step) {
        return unfold(t, dimension, size, step);
      },
      arg("dimension"), arg("size"), arg("step"));

  // --- splitting ------------------------------------------------------------------------
  auto unbind_fn = [](const Tensor& t, int64_t dim) { return to_tuple(unbind(t, dim)); };
  m.def("unbind", unbind_fn, arg("input"), arg("dim") = 0);
  cls.def("unbind", unbind_fn, arg("dim") = 0);

  m.def(
      "split",
      [](const Tensor& t, py::handle sizes, int64_t dim) { return split_dispatch(t, sizes, dim); },
      arg("tensor"), arg("split_size_or_sections"), arg("dim") = 0);
  cls.def(
      "split",
      [](const Tensor& t, py::handle sizes, int64_t dim) { return split_dispatch(t, sizes, dim); },
      arg("split_size"), arg("dim") = 0);
  auto split_with_sizes_fn = [](const Tensor& t, py::handle sizes, int64_t dim) {
    return to_tuple(
        split_with_sizes(t, parse_int_sequence(sizes, "split_with_sizes", "split_sizes"), dim));
  };
  m.def("split_with_sizes", split_with_sizes_fn, arg("input"), arg("split_sizes"), arg("dim") = 0);
  cls.def("split_with_sizes", split_with_sizes_fn, arg("split_sizes"), arg("dim") = 0);

  auto chunk_fn = [](const Tensor& t, int64_t chunks, int64_t dim) {
    return to_tuple(chunk(t, chunks, dim));
  };
  m.def("chunk", chunk_fn, arg("input"), arg("chunks"), arg("dim") = 0);
  cls.def("chunk", chunk_fn, arg("chunks"), arg("dim") = 0);

  m.def("tensor_split", tensor_split_kw, arg("input"), arg("indices_or_sections") = py::none(),
        arg("dim") = 0, py::kw_only(), arg("sections") = py::none(), arg("indices") = py::none(),
        arg("tensor_indices_or_sections") = py::none());
  cls.def("tensor_split", tensor_split_kw, arg("indices_or_sections") = py::none(), arg("dim") = 0,
          py::kw_only(), arg("sections") = py::none(), arg("indices") = py::none(),
          arg("tensor_indices_or_sections") = py::none());

  for (char which : {'h', 'v', 'd'}) {
    const char* name = which == 'h' ? "hsplit" : which == 'v' ? "vsplit" : "dsplit";
    auto fn = [which](const Tensor& t, py::handle ios, py::handle sections, py::handle indices) {
      py::handle h = !sections.is_none() ? sections : !indices.is_none() ? indices : ios;
      if (h.is_none()) throw py::type_error("missing argument 'indices_or_sections'");
      return directional_dispatch(t, which, h);
    };
    m.def(name, fn, arg("input"), arg("indices_or_sections") = py::none(), py::kw_only(),
          arg("sections") = py::none(), arg("indices") = py::none());
    cls.def(name, fn, arg("indices_or_sections") = py::none(), py::kw_only(),
            arg("sections") = py::none(), arg("indices") = py::none());
  }
}

}  // namespace ember
