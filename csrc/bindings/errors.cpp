// Maps Ember's C++ error classes to the Python exceptions a PyTorch user expects.
#include "bindings/pybind_ember.h"

namespace ember {

void init_errors(py::module_& m) {
  // ember._C._LinAlgError, re-exported as ember.linalg.LinAlgError (PyTorch's layout).
  static py::handle linalg_error =
      py::exception<LinAlgError>(m, "_LinAlgError", PyExc_RuntimeError).release();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
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
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const std::bad_alloc&) {
      PyErr_SetString(PyExc_MemoryError, "[alloc] out of memory");
    }
  });
}

}  // namespace ember
