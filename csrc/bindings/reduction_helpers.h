// Argument conversion shared by the reduction binding files (reductions*.cpp).
#pragma once
#include <utility>

#include "bindings/pybind_ember.h"
#include "ops/reduce.h"

namespace ember {

// Runs an op with the GIL released when it reads enough elements for other Python threads to
// gain from it (tiny ops keep it: releasing costs more than they do). f touches no Python object.
template <typename F>
auto nogil(int64_t work, F&& f) {
  if (work < (int64_t(1) << 16)) return f();
  py::gil_scoped_release release;
  return f();
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
  if (!PyLong_Check(h.ptr()) && !PyIndex_Check(h.ptr())) {
    throw py::type_error(
        str_cat("[", op, "] argument 'dim' must be int, not ", Py_TYPE(h.ptr())->tp_name));
  }
  return py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr())).cast<int64_t>();
}

// An ember.return_types named tuple (structseq) holding two tensors, e.g. max(values, indices).
// out= calls get the "<name>_out" type, as PyTorch.
py::object return_type(const char* name, const TensorPair& p, bool is_out = false);

void init_reductions_minmax(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
void init_reductions_stats(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
void init_reductions_scan(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);

}  // namespace ember
