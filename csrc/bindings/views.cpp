// View ops and copies: view, reshape, transpose, permute, expand, squeeze, ... contiguous, clone.
#include "api/views.h"
#include "api/memory_format.h"
#include "bindings/factory_args.h"
#include "bindings/fastcall.h"
#include "bindings/op_observer.h"
#include "bindings/pybind_ember.h"
#include "core/shape.h"
#include "ops/memory_format.h"

namespace ember {

namespace {

// Tensor.view is hand-written (METH_FASTCALL): x.view(2, 5) is called in tight loops, and
// pybind11's generic dispatcher costs several hundred ns per call, more than the view itself
// (see fastcall.h, docs/design/per-op-overhead.md). It takes a shape given as plain ints and
// gives any other call (a sequence, a dtype, keywords) to the general pybind11 method
// (g_view_general), made in init_views and attached to no name.
PyObject* g_view_general = nullptr;

PyObject* fast_view(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return fastcall::guarded([&]() -> PyObject* {
    Tensor t;
    DimVector shape;
    if (!observer::installed() && !kwnames && nargs > 0 && fastcall::int_args(args, nargs, shape) &&
        fastcall::unwrap(self, t)) {
      return fastcall::wrap(view(t, shape));
    }
    return fastcall::call_method_fallback(g_view_general, self, args, nargs, kwnames);
  });
}

PyMethodDef g_view_def = {"view", fastcall::as_cfunction(fast_view), METH_FASTCALL | METH_KEYWORDS,
                          "A view with a new shape, sharing storage."};

}  // namespace

void init_views(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  // Tensor.view: the general form (view(*shape) and view(dtype)) is the fallback of the
  // hand-written fast_view, which is the only public Tensor.view.
  g_view_general = fastcall::keep_fallback(py::cpp_function(
      [](py::object self, py::args shape) -> py::object {
        Tensor t = self.cast<Tensor>();
        if (shape.size() == 1) {
          if (auto dt = try_parse_dtype(shape[0])) {
            EMBER_CHECK(!is_quantized(t.dtype()) && !is_quantized(*dt),
                        "[view] cannot view a tensor as another dtype when either is quantized (",
                        dtype_name(t.dtype()), " -> ", dtype_name(*dt),
                        "): use int_repr() or dequantize()");
            EMBER_CHECK(element_size(*dt) == t.itemsize(),
                        "[view] viewing a tensor as a dtype with "
                        "a different element size is not supported (",
                        dtype_name(t.dtype()), " -> ", dtype_name(*dt), ")");
            Tensor v = alias(t);
            return py::cast(Tensor(make_intrusive<TensorImpl>(t.storage(), *dt, t.sizes(),
                                                              t.strides(), t.storage_offset(),
                                                              t.impl()->version_counter())));
          }
        }
        return py::cast(view(t, parse_shape(shape, "view")));
      },
      py::name("view"), py::is_method(cls), py::sibling(py::getattr(cls, "view", py::none()))));
  fastcall::add_method(cls, g_view_def);
  cls.def(
      "view_as", [](const Tensor& t, const Tensor& other) { return view(t, other.sizes()); },
      py::arg("other"));
  cls.def("reshape", [](const Tensor& t, py::args shape) {
    return reshape(t, parse_shape(shape, "reshape"));
  });
  m.def(
      "reshape",
      [](const Tensor& t, py::object shape) {
        return reshape(t, parse_int_sequence(shape, "reshape", "shape"));
      },
      py::arg("input"), py::arg("shape"));
  cls.def("reshape_as", [](const Tensor& t, const Tensor& o) { return reshape(t, o.sizes()); });

  auto flatten_fn = [](const Tensor& t, int64_t s, int64_t e) { return flatten(t, s, e); };
  cls.def("flatten", flatten_fn, py::arg("start_dim") = 0, py::arg("end_dim") = -1);
  m.def("flatten", flatten_fn, py::arg("input"), py::arg("start_dim") = 0, py::arg("end_dim") = -1);

  auto transpose_fn = [](const Tensor& t, int64_t a, int64_t b) { return transpose(t, a, b); };
  for (const char* name : {"transpose", "swapdims"}) {
    cls.def(name, transpose_fn, py::arg("dim0"), py::arg("dim1"));
    m.def(name, transpose_fn, py::arg("input"), py::arg("dim0"), py::arg("dim1"));
  }
  cls.def("swapaxes", transpose_fn, py::arg("axis0"), py::arg("axis1"));
  m.def("swapaxes", transpose_fn, py::arg("input"), py::arg("axis0"), py::arg("axis1"));
  cls.def("permute",
          [](const Tensor& t, py::args dims) { return permute(t, parse_shape(dims, "permute")); });
  m.def(
      "permute",
      [](const Tensor& t, py::object dims) {
        return permute(t, parse_int_sequence(dims, "permute", "dims"));
      },
      py::arg("input"), py::arg("dims"));

  cls.def("expand",
          [](const Tensor& t, py::args sizes) { return expand(t, parse_shape(sizes, "expand")); });
  cls.def(
      "expand_as", [](const Tensor& t, const Tensor& o) { return expand(t, o.sizes()); },
      py::arg("other"));

  auto squeeze_fn = [](const Tensor& t, py::object dim) {
    if (dim.is_none()) return squeeze(t);
    return squeeze(t, parse_int_sequence(dim, "squeeze", "dim"));
  };
  cls.def("squeeze", squeeze_fn, py::arg("dim") = py::none());
  m.def("squeeze", squeeze_fn, py::arg("input"), py::arg("dim") = py::none());
  auto unsqueeze_fn = [](const Tensor& t, int64_t d) { return unsqueeze(t, d); };
  cls.def("unsqueeze", unsqueeze_fn, py::arg("dim"));
  m.def("unsqueeze", unsqueeze_fn, py::arg("input"), py::arg("dim"));

  auto select_fn = [](const Tensor& t, int64_t d, int64_t i) { return select(t, d, i); };
  cls.def("select", select_fn, py::arg("dim"), py::arg("index"));
  m.def("select", select_fn, py::arg("input"), py::arg("dim"), py::arg("index"));
  auto narrow_fn = [](const Tensor& t, int64_t d, int64_t s, int64_t l) {
    return narrow(t, d, s, l);
  };
  cls.def("narrow", narrow_fn, py::arg("dim"), py::arg("start"), py::arg("length"));
  m.def("narrow", narrow_fn, py::arg("input"), py::arg("dim"), py::arg("start"), py::arg("length"));

  auto narrow_copy_fn = [](const Tensor& t, int64_t d, int64_t s, int64_t l, py::object out) {
    return narrow_copy(t, d, s, l, out.is_none() ? Tensor() : out.cast<Tensor>());
  };
  cls.def(
      "narrow_copy",
      [](const Tensor& t, int64_t d, int64_t s, int64_t l) { return narrow_copy(t, d, s, l); },
      py::arg("dim"), py::arg("start"), py::arg("length"));
  m.def("narrow_copy", narrow_copy_fn, py::arg("input"), py::arg("dim"), py::arg("start"),
        py::arg("length"), py::kw_only(), py::arg("out") = py::none());

  auto as_strided_fn = [](const Tensor& t, py::object size, py::object stride, py::object off) {
    std::optional<int64_t> o;
    if (!off.is_none()) o = parse_int(off, "as_strided", "storage_offset");
    return as_strided(t, parse_int_sequence(size, "as_strided", "size"),
                      parse_int_sequence(stride, "as_strided", "stride"), o);
  };
  cls.def("as_strided", as_strided_fn, py::arg("size"), py::arg("stride"),
          py::arg("storage_offset") = py::none());
  m.def("as_strided", as_strided_fn, py::arg("input"), py::arg("size"), py::arg("stride"),
        py::arg("storage_offset") = py::none());

  cls.def(
      "_to_dtype", [](const Tensor& t, ScalarType dt, bool copy) { return to_dtype(t, dt, copy); },
      py::arg("dtype"), py::arg("copy") = false);
  cls.def(
      "contiguous",
      [](const Tensor& t, py::object memory_format) {
        return contiguous_as(
            t, parse_memory_format(memory_format, "contiguous", native::MemoryFormat::Contiguous));
      },
      py::arg("memory_format") = py::none());
  cls.def(
      "clone",
      [](const Tensor& t, py::object memory_format) {
        // Always a copy; laid out in the format asked for (preserve: t's dense strides).
        const native::MemoryFormat format = parse_memory_format(memory_format, "clone");
        if (format == native::MemoryFormat::Preserve || native::is_contiguous_as(t, format)) {
          return clone(t);
        }
        return contiguous_as(t, format);
      },
      py::kw_only(), py::arg("memory_format") = py::none());
  m.def(
      "clone", [](const Tensor& t, py::object) { return clone(t); }, py::arg("input"),
      py::kw_only(), py::arg("memory_format") = py::none());
  cls.def(
      "copy_",
      [](py::object self, py::object src, bool) {
        Tensor t = self.cast<Tensor>();
        copy_(t, to_operand(src, "copy_"));
        return self;
      },
      py::arg("src"), py::arg("non_blocking") = false);
}

}  // namespace ember
