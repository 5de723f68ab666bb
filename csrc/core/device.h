// Devices. Only the CPU has kernels until the CUDA backend registers its own; a tensor on any
// other device cannot be created and the error says so (see check_device_available).
#pragma once
#include <cstdint>
#include <string>

namespace ember {

enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };
constexpr int kNumDeviceTypes = 2;

struct Device {
  DeviceType type = DeviceType::CPU;
  int16_t index = -1;  // -1: the current device of that type

  Device() = default;
  Device(DeviceType t, int16_t i = -1) : type(t), index(i) {}  // NOLINT
  // Parses "cpu", "cuda", "cuda:1"; throws RuntimeError on anything else.
  static Device parse(const std::string& spec);

  bool is_cpu() const { return type == DeviceType::CPU; }
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string str() const;  // "cpu", "cuda:0"
};

const char* device_type_name(DeviceType t);

// Throws a clear RuntimeError naming `op` when tensors cannot live on `d` in this build.
void check_device_available(Device d, const char* op);

}  // namespace ember
