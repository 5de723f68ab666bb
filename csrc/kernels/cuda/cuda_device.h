// Ember's CUDA device services (libember_cuda): memory, copies and device queries, registered
// with the core as the CUDA DeviceBackend (core/device_backend.h) when the library is loaded on
// a machine with a GPU.
#pragma once
#include <cstddef>
#include <cstdint>

namespace ember::cuda {

// The number of usable CUDA devices: 0 without a driver or a GPU (never throws).
int device_count();
// Registers the CUDA backend with the core; returns false (registering nothing) without a GPU.
bool register_backend();

struct MemoryStats {
  int64_t allocated_bytes;  // in live tensors' blocks
  int64_t peak_allocated_bytes;
};
MemoryStats memory_stats(int device);
void reset_peak_memory_stats(int device);

// Makes `device` current for this thread while it lives, then restores the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace ember::cuda
