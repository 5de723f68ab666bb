// Argument converters shared by the joining/ordering and matmul binding files.
#pragma once
#include "bindings/pybind_ember.h"

namespace ember {

// A tuple/list of Tensors (PyTorch's TensorList argument).
inline std::vector<Tensor> tensor_list(py::handle h, const char* op) {
  if (is_tensor(h) || !PySequence_Check(h.ptr()) || PyUnicode_Check(h.ptr())) {
    throw py::type_error(str_cat("[", op, "] ", op,
                                 "(): argument 'tensors' must be tuple of "
                                 "Tensors, not ",
                                 Py_TYPE(h.ptr())->tp_name));
  }
  std::vector<Tensor> out;
  size_t i = 0;
  for (py::handle item : py::reinterpret_borrow<py::sequence>(h)) {
    if (!is_tensor(item)) {
      throw py::type_error(str_cat("[", op, "] expected Tensor as element ", i,
                                   " in argument 0, "
                                   "but got ",
                                   Py_TYPE(item.ptr())->tp_name));
    }
    out.push_back(item.cast<Tensor>());
    ++i;
  }
  return out;
}

// Varargs tensors, or a single tuple/list of them (meshgrid, cartesian_prod, einsum operands).
inline std::vector<Tensor> tensor_varargs(const py::args& args, size_t first, const char* op) {
  if (args.size() == first + 1 && !is_tensor(args[first])) return tensor_list(args[first], op);
  std::vector<Tensor> out;
  for (size_t i = first; i < args.size(); ++i) {
    if (!is_tensor(args[i])) {
      throw py::type_error(str_cat("[", op, "] expected Tensor as argument ", i, ", but got ",
                                   Py_TYPE(args[i].ptr())->tp_name));
    }
    out.push_back(args[i].cast<Tensor>());
  }
  return out;
}

inline Tensor opt_tensor(py::handle h) {
  return h.is_none() ? Tensor() : h.cast<Tensor>();
}

// None or an int argument (parse_int's rules); errors name op and the argument `what`.
inline std::optional<int64_t> opt_int(py::handle h, const char* op, const char* what = "dim") {
  if (h.is_none()) return std::nullopt;
  return parse_int(h, op, what);
}

// Runs f() with the GIL released (heavy kernels), returning its result.
template <typename F>
auto without_gil(F&& f) -> decltype(f()) {
  py::gil_scoped_release release;
  return f();
}

}  // namespace ember
