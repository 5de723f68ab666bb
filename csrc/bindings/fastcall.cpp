// Helpers shared by the hand-written CPython entry points (see fastcall.h).
#include "bindings/fastcall.h"

namespace ember::fastcall {

PyObject* call_method_fallback(PyObject* fallback, PyObject* self, PyObject* const* args,
                               Py_ssize_t nargs, PyObject* kwnames) {
  // Prepend self to the arguments.
  PyObject* stack[16];
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  if (nargs + nkw + 1 > 16) {
    py::tuple pargs(nargs + 1);
    Py_INCREF(self);
    PyTuple_SET_ITEM(pargs.ptr(), 0, self);
    for (Py_ssize_t i = 0; i < nargs; ++i) {
      Py_INCREF(args[i]);
      PyTuple_SET_ITEM(pargs.ptr(), i + 1, args[i]);
    }
    py::dict kw;
    for (Py_ssize_t i = 0; i < nkw; ++i) kw[PyTuple_GET_ITEM(kwnames, i)] = args[nargs + i];
    return PyObject_Call(fallback, pargs.ptr(), kw.ptr());
  }
  stack[0] = self;
  for (Py_ssize_t i = 0; i < nargs + nkw; ++i) stack[i + 1] = args[i];
  return PyObject_Vectorcall(fallback, stack, nargs + 1, kwnames);
}

PyObject* call_dunder(PyObject* self, const char* name, PyObject* other) {
  PyObject* key = PyUnicode_InternFromString(name);
  if (!key) return nullptr;
  PyObject* fn = _PyType_Lookup(Py_TYPE(self), key);  // borrowed
  Py_DECREF(key);
  if (!fn) Py_RETURN_NOTIMPLEMENTED;
  Py_INCREF(fn);
  PyObject* args[2] = {self, other};
  PyObject* r = PyObject_Vectorcall(fn, args, 2, nullptr);
  Py_DECREF(fn);
  return r;
}

namespace {
std::vector<PyObject*>& fallback_list() {
  static std::vector<PyObject*> list;  // strong references, never released
  return list;
}
}  // namespace

PyObject* keep_fallback(py::object general) {
  EMBER_CHECK(general, "[fastcall] missing fallback");
  PyObject* fn = general.release().ptr();
  fallback_list().push_back(fn);
  return fn;
}

const std::vector<PyObject*>& fallbacks() {
  return fallback_list();
}

void add_method(py::handle cls, PyMethodDef& def) {
  auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  PyObject* dict = type->tp_dict;
  EMBER_CHECK(!PyDict_GetItemString(dict, def.ml_name), "[fastcall] ", type->tp_name, ".",
              def.ml_name, " is already bound");
  py::object descr = py::reinterpret_steal<py::object>(PyDescr_NewMethod(type, &def));
  if (!descr || PyDict_SetItemString(dict, def.ml_name, descr.ptr()) < 0) {
    throw py::error_already_set();
  }
  PyType_Modified(type);
}

void add_getter(py::handle cls, PyGetSetDef& def) {
  auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  PyObject* dict = type->tp_dict;
  EMBER_CHECK(!PyDict_GetItemString(dict, def.name), "[fastcall] ", type->tp_name, ".", def.name,
              " is already bound");
  py::object descr = py::reinterpret_steal<py::object>(PyDescr_NewGetSet(type, &def));
  if (!descr || PyDict_SetItemString(dict, def.name, descr.ptr()) < 0) {
    throw py::error_already_set();
  }
  PyType_Modified(type);
}

void add_function(py::module_& m, PyMethodDef& def) {
  EMBER_CHECK(!py::hasattr(m, def.ml_name), "[fastcall] ", def.ml_name, " is already bound");
  py::object fn = py::reinterpret_steal<py::object>(PyCFunction_NewEx(&def, m.ptr(), nullptr));
  if (!fn) throw py::error_already_set();
  m.attr(def.ml_name) = fn;
}

}  // namespace ember::fastcall
