#include "core/device.h"

#include "core/device_backend.h"
#include "core/error.h"

namespace ember {

const char* device_type_name(DeviceType t) {
  return t == DeviceType::CPU ? "cpu" : "cuda";
}

Device Device::parse(const std::string& spec) {
  std::string type = spec;
  int index = -1;
  auto colon = spec.find(':');
  if (colon != std::string::npos) {
    type = spec.substr(0, colon);
    std::string idx = spec.substr(colon + 1);
    bool digits =
        !idx.empty() && idx.size() < 6 && idx.find_first_not_of("0123456789") == std::string::npos;
    EMBER_CHECK(digits, "[device] invalid device string: '", spec, "'");
    index = std::stoi(idx);
  }
  if (type == "cpu") {
    EMBER_CHECK(index <= 0, "[device] CPU device index must be -1 or zero, got ", index);
    return Device(DeviceType::CPU, static_cast<int16_t>(index));
  }
  if (type == "cuda") return Device(DeviceType::CUDA, static_cast<int16_t>(index));
  EMBER_CHECK(type != "meta",
              "[device] Ember has no 'meta' device (tensors that hold a shape but no data): "
              "create the tensors and modules on 'cpu' instead; a CPU module also serves as the "
              "template module of ember.func.functional_call");
  EMBER_THROW(Error,
              "[device] expected one of cpu, cuda device type at start of device string: ", spec);
}

std::string Device::str() const {
  std::string s = device_type_name(type);
  if (index >= 0) s += ":" + std::to_string(index);
  return s;
}

void check_device_available(Device d, const char* op) {
  if (d.is_cpu()) return;
  const DeviceBackend* backend = device_backend(d.type);
  if (backend == nullptr) {
    EMBER_THROW(Error, "[", op, "] device '", d.str(),
                "' is not available: Ember's CUDA backend is not loaded (it needs a CUDA GPU, "
                "its driver and a build with the CUDA toolkit; ember.cuda.is_available() is "
                "False)");
  }
  const int count = backend->device_count();
  EMBER_CHECK(d.index < count, "[", op, "] device '", d.str(),
              "' does not exist: this machine has ", count, " CUDA device(s)");
}

}  // namespace ember
