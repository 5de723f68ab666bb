// Argument conversion shared by the reduction binding files (reductions*.cpp).
#pragma once
#include <utility>

#include "api/reduce.h"
#include "bindings/pybind_ember.h"

namespace ember {

// Runs an op with the GIL released when it is large enough (see with_gil_released_if).
template <typename F>
auto nogil(int64_t work, F&& f) {
  return with_gil_released_if(work, std::forward<F>(f));
}

inline ScalarType opt_dtype(py::handle h) {
  return h.is_none() ? ScalarType::Undefined : h.cast<ScalarType>();
}

inline Tensor opt_tensor(py::handle h, const char* op, const char* what = "out") {
  if (h.is_none()) return Tensor();
  if (!is_tensor(h)) {
    throw py::type_error(str_cat("[", op, "] argument '", what, "' must be Tensor, not ",
                                 Py_TYPE(h.ptr())->tp_name));
  }
  return h.cast<Tensor>();
}

// out=(values, indices) for two-output ops.
inline std::pair<Tensor, Tensor> out_pair(py::handle h, const char* op) {
  if (h.is_none()) return {};
  if (!PyTuple_Check(h.ptr()) && !PyList_Check(h.ptr())) {
    throw py::type_error(str_cat("[", op, "] argument 'out' must be a tuple of two Tensors, not ",
                                 Py_TYPE(h.ptr())->tp_name));
  }
  py::sequence seq = py::reinterpret_borrow<py::sequence>(h);
  if (seq.size() != 2 || !is_tensor(seq[0]) || !is_tensor(seq[1])) {
    throw py::type_error(str_cat("[", op, "] argument 'out' must be a tuple of two Tensors"));
  }
  return {seq[0].cast<Tensor>(), seq[1].cast<Tensor>()};
}

// dim=None or an int (ops that reduce one dim or everything).
inline std::optional<int64_t> opt_dim(py::handle h, const char* op) {
  if (h.is_none()) return std::nullopt;
  return parse_int(h, op, "dim");
}

// An ember.return_types named tuple (structseq) holding two tensors, e.g. max(values, indices).
// out= calls get the "<name>_out" type, as PyTorch.
py::object return_type(const char* name, const TensorPair& p, bool is_out = false);

void init_reductions_minmax(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
void init_reductions_stats(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
void init_reductions_scan(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);

// Binds a reduction over `dim` with keepdim and out= (all, any, amax, amin): the function form
// ember.name(input, dim, keepdim, *, out) and the method form. `default_dim` is None for
// all/any and () for amax/amin, as in PyTorch.
using DimReductionFn = Tensor (*)(const Tensor&, const DimList&, bool, const Tensor&);
inline void def_dim_reduction(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls,
                              const char* name, DimReductionFn f, py::object default_dim) {
  m.def(
      name,
      [f, name](const Tensor& t, py::handle dim, bool keepdim, py::handle out) {
        DimList dims = parse_dims(dim, name);
        Tensor o = opt_tensor(out, name);
        return nogil(t.numel(), [&] { return f(t, dims, keepdim, o); });
      },
      py::arg("input"), py::arg("dim") = default_dim, py::arg("keepdim") = false, py::kw_only(),
      py::arg("out") = py::none());
  cls.def(
      name,
      [f, name](const Tensor& t, py::handle dim, bool keepdim) {
        DimList dims = parse_dims(dim, name);
        return nogil(t.numel(), [&] { return f(t, dims, keepdim, Tensor()); });
      },
      py::arg("dim") = default_dim, py::arg("keepdim") = false);
}

}  // namespace ember
