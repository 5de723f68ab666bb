#include "bindings/size_object.h"

namespace ember {

py::object size_object(IntArrayRef sizes) {
  // ember.Size is a tuple subclass without __dict__: filled like a tuple, without running its
  // Python __new__ (which converts arbitrary elements; these are ints already).
  static PyTypeObject* size_type = reinterpret_cast<PyTypeObject*>(
      py::object(py::module_::import("ember._size").attr("Size")).release().ptr());
  PyObject* s = size_type->tp_alloc(size_type, static_cast<Py_ssize_t>(sizes.size()));
  if (s == nullptr) throw py::error_already_set();
  for (size_t i = 0; i < sizes.size(); ++i) {
    PyObject* v = PyLong_FromLongLong(sizes[i]);
    if (v == nullptr) {
      Py_DECREF(s);
      throw py::error_already_set();
    }
    PyTuple_SET_ITEM(s, static_cast<Py_ssize_t>(i), v);
  }
  return py::reinterpret_steal<py::object>(s);
}

}  // namespace ember
