// ember._C._autocast: autocast's thread-local state (api/autocast.h), which
// python/ember/amp/autocast_mode.py turns into torch's functions (torch.set_autocast_enabled,
// torch.get_autocast_dtype, ...) and the autocast context manager. A device type is a string,
// "cpu" or "cuda" (an index such as "cuda:0" is accepted and ignored, as PyTorch does).
#include <string>

#include "api/autocast.h"
#include "bindings/pybind_ember.h"
#include "core/device.h"

namespace ember {

namespace {

// Device types PyTorch knows but this build has no autocast state for: is_available() answers
// False for them rather than the unknown-device error that other strings get.
bool other_torch_device_type(const std::string& spec) {
  static const char* const kNames[] = {
      "ipu",  "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",   "fpga",
      "maia", "xla", "lazy",   "vulkan", "mps",    "meta",  "hpu", "mtia", "privateuseone"};
  const std::string type = spec.substr(0, spec.find(':'));
  for (const char* n : kNames) {
    if (type == n) return true;
  }
  return false;
}

// "cpu" / "cuda[:i]" -> the device type; anything else raises RuntimeError (Device::parse's).
DeviceType device_type_of(const std::string& spec) {
  return Device::parse(spec).type;
}

}  // namespace

void init_autocast(py::module_& m) {
  py::module_ ac =
      m.def_submodule("_autocast", "autocast's thread-local state (see ember.amp.autocast_mode)");
  ac.def(
      "is_available",
      [](const std::string& device_type) {
        if (other_torch_device_type(device_type)) return false;
        device_type_of(device_type);  // raises for a string that names no device type
        return true;
      },
      py::arg("device_type"));
  ac.def(
      "is_enabled",
      [](const std::string& device_type) { return autocast::active(device_type_of(device_type)); },
      py::arg("device_type"));
  ac.def(
      "set_enabled",
      [](const std::string& device_type, bool enabled) {
        autocast::set_enabled(device_type_of(device_type), enabled);
      },
      py::arg("device_type"), py::arg("enabled"));
  ac.def(
      "get_dtype",
      [](const std::string& device_type) {
        return autocast::lower_dtype(device_type_of(device_type));
      },
      py::arg("device_type"));
  ac.def(
      "set_dtype",
      [](const std::string& device_type, ScalarType dtype) {
        autocast::set_lower_dtype(device_type_of(device_type), dtype);
      },
      py::arg("device_type"), py::arg("dtype"));
  ac.def("is_cache_enabled", [] { return autocast::is_cache_enabled(); });
  ac.def(
      "set_cache_enabled", [](bool enabled) { autocast::set_cache_enabled(enabled); },
      py::arg("enabled"));
  ac.def("increment_nesting", [] { return autocast::increment_nesting(); });
  ac.def("decrement_nesting", [] { return autocast::decrement_nesting(); });
  ac.def("clear_cache", [] { autocast::clear_cache(); });
  // The number of cached casts on this thread (for tests).
  ac.def("_cache_size", [] { return static_cast<int64_t>(autocast::cache_size()); });
}

}  // namespace ember
