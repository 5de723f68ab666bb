// ember._C's deterministic-algorithms switch (core/deterministic.h), read by
// ember.use_deterministic_algorithms and friends, and the C++ -> Python UserWarning bridge.
#include "core/deterministic.h"

#include "bindings/pybind_ember.h"

namespace ember {

namespace {
// Kernels may warn with the GIL released (and from an OpenMP worker): take it here. A warning
// filter that turns the warning into an error raises it from the op.
void python_warning(const std::string& message) {
  py::gil_scoped_acquire gil;
  if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) < 0) throw py::error_already_set();
}
}  // namespace

void init_deterministic(py::module_& m) {
  set_warning_handler(&python_warning);
  m.def(
      "_set_deterministic_algorithms",
      [](bool mode, bool warn_only) { set_deterministic_algorithms(mode, warn_only); },
      py::arg("mode"), py::arg("warn_only") = false);
  m.def("_get_deterministic_algorithms", &deterministic_algorithms);
  m.def("_get_deterministic_algorithms_warn_only", &deterministic_algorithms_warn_only);
  m.def(
      "_alert_not_deterministic",
      [](const std::string& caller) { alert_not_deterministic(caller); }, py::arg("caller"));
}

}  // namespace ember
