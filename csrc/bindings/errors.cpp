// Maps Ember's C++ error classes to the Python exceptions a PyTorch user expects.
#include "bindings/pybind_ember.h"

namespace ember {

void init_errors(py::module_& m) {
  // ember._C._LinAlgError, re-exported as ember.linalg.LinAlgError (PyTorch's layout).
  static py::handle linalg_error =
      py::exception<LinAlgError>(m, "_LinAlgError", PyExc_RuntimeError).release();
  // ember.OutOfMemoryError, as torch.OutOfMemoryError: a RuntimeError (what PyTorch raises when an
  // allocation fails), and also a MemoryError, so both kinds of handler catch it.
  static py::handle out_of_memory_error = [&] {
    py::tuple bases = py::make_tuple(py::handle(PyExc_RuntimeError), py::handle(PyExc_MemoryError));
    PyObject* cls = PyErr_NewException("ember.OutOfMemoryError", bases.ptr(), nullptr);
    if (cls == nullptr) throw py::error_already_set();
    m.attr("OutOfMemoryError") = py::handle(cls);
    return py::handle(cls);
  }();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const py::cast_error& e) {
      // An argument of the wrong kind that reached a cast: PyTorch's class for that is TypeError
      // (pybind11's default translation is RuntimeError).
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const LinAlgError& e) {
      PyErr_SetString(linalg_error.ptr(), e.what());
    } catch (const IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const NotImplementedError& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    } catch (const OutOfMemoryError& e) {
      PyErr_SetString(out_of_memory_error.ptr(), e.what());
    } catch (const Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const std::bad_alloc&) {
      PyErr_SetString(out_of_memory_error.ptr(), "[alloc] out of memory");
    }
  });
}

}  // namespace ember
