// Helpers for the hand-written CPython entry points of the hottest bindings.
//
// pybind11's generic dispatcher costs several hundred nanoseconds per call (argument vectors, the
// overload loop, caster objects) -- more than a whole add of two 10-element tensors. So the few
// entry points users call in tight loops are raw CPython functions: the number slots of + - * /
// (elementwise.cpp), mp_subscript (indexing.cpp), METH_FASTCALL Tensor.sum (reductions.cpp) and
// Tensor.view (views.cpp), Tensor.dim / numel / shape (tensor_class.cpp), and ember.zeros / ones /
// empty (creation.cpp). Each is written in its op's binding file, in the same place as the op's
// pybind11 binding, and is the op's only public entry: it handles the common argument patterns
// itself and hands the others to the op's general pybind11 function (its "fallback", attached to
// no public name), so the full signature and its error messages stay pybind11's.
// See docs/design/per-op-overhead.md.
#pragma once
#include <pybind11/detail/exception_translation.h>

#include <vector>

#include "bindings/pybind_ember.h"

namespace ember::fastcall {

// A new reference to the Python object of t.
inline PyObject* wrap(const Tensor& t) {
  return py::detail::make_caster<Tensor>::cast(t, py::return_value_policy::move, {}).ptr();
}

// The Tensor held by o; false when o is not an initialised ember.Tensor.
inline bool unwrap(PyObject* o, Tensor& out) {
  if (!is_tensor(o)) return false;
  auto vh = reinterpret_cast<py::detail::instance*>(o)->get_value_and_holder();
  if (!vh.holder_constructed()) return false;
  out = Tensor(vh.holder<TensorImplPtr>());
  return true;
}

// Runs f, converting C++ exceptions to Python ones exactly as the pybind11 bindings do.
template <typename F>
PyObject* guarded(F&& f) {
  try {
    return f();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (py::builtin_exception& e) {
    e.set_error();
  } catch (...) {
    py::detail::try_translate_exceptions();
  }
  return nullptr;
}

// A METH_FASTCALL | METH_KEYWORDS function as the PyCFunction a PyMethodDef stores.
template <typename R, typename... Args>
PyCFunction as_cfunction(R (*f)(Args...)) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f));
}

// Reads positional ints into `out`; false when any argument is not a plain int (or overflows).
inline bool int_args(PyObject* const* args, Py_ssize_t nargs, DimVector& out) {
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    if (!PyLong_CheckExact(args[i])) return false;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(args[i], &overflow);
    if (overflow) return false;
    out.push_back(v);
  }
  return true;
}

// Calls a method's fallback (a pybind11 method) as fallback(self, *args, **kwargs), from the
// vectorcall arguments of a METH_FASTCALL | METH_KEYWORDS method.
PyObject* call_method_fallback(PyObject* fallback, PyObject* self, PyObject* const* args,
                               Py_ssize_t nargs, PyObject* kwnames);

// Calls type(self).<name>(self, other), as Python's operator protocol does; NotImplemented when
// the type has no such attribute. (A slot's fallback cannot be a saved slot function: CPython's
// generic slot checks that the type still uses it.)
PyObject* call_dunder(PyObject* self, const char* name, PyObject* other);

// Keeps `general` (a pybind11 function made with py::cpp_function, attached to no name) alive
// for the process as the fallback of a hand-written entry point and returns it (borrowed).
// make_bool_arguments_strict visits the fallbacks listed here, since no module or class
// attribute leads to them.
PyObject* keep_fallback(py::object general);
const std::vector<PyObject*>& fallbacks();

// Registers the public attribute of a hand-written entry point, once: a method (METH_FASTCALL,
// METH_NOARGS, ...) or a getter of the Tensor class `cls`, or a function of module m. `def` must
// outlive the module (a static). Raises when the name is already bound: a hand-written entry
// point is its op's only binding.
void add_method(py::handle cls, PyMethodDef& def);
void add_getter(py::handle cls, PyGetSetDef& def);
void add_function(py::module_& m, PyMethodDef& def);

}  // namespace ember::fastcall
