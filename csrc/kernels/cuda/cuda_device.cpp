#include "kernels/cuda/cuda_device.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <mutex>

#include "core/device_backend.h"
#include "kernels/cuda/cuda_check.h"

namespace ember::cuda {

namespace {

constexpr int kMaxDevices = 64;

struct DeviceCounters {
  std::atomic<int64_t> allocated{0};
  std::atomic<int64_t> peak{0};
};
DeviceCounters g_counters[kMaxDevices];

void* allocate(size_t nbytes, int index, const char* op) {
  if (nbytes == 0) return nullptr;
  DeviceGuard guard(index);
  void* ptr = nullptr;
  EMBER_CUDA_CHECK(op, cudaMalloc(&ptr, nbytes));
  DeviceCounters& c = g_counters[index];
  const int64_t now =
      c.allocated.fetch_add(static_cast<int64_t>(nbytes)) + static_cast<int64_t>(nbytes);
  int64_t peak = c.peak.load();
  while (now > peak && !c.peak.compare_exchange_weak(peak, now)) {
  }
  return ptr;
}

void release(void* ptr, size_t nbytes, int index) noexcept {
  if (ptr == nullptr) return;
  int previous = -1;
  cudaGetDevice(&previous);
  cudaSetDevice(index);
  // cudaFree waits for the device's queued work, so no kernel still uses the block. An error here
  // (a context already torn down at exit) cannot be reported from a destructor; it is cleared.
  if (cudaFree(ptr) != cudaSuccess) cudaGetLastError();
  if (previous >= 0) cudaSetDevice(previous);
  g_counters[index].allocated.fetch_sub(static_cast<int64_t>(nbytes));
}

void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes,
                const char* op) {
  if (nbytes == 0) return;
  DeviceGuard guard(dst_device.is_cpu() ? src_device.index : dst_device.index);
  // Unified addressing tells the direction from the pointers. A copy from or to pageable host
  // memory returns when it is done; one between devices is only queued, hence the sync.
  EMBER_CUDA_CHECK(op, cudaMemcpy(dst, src, nbytes, cudaMemcpyDefault));
  if (!dst_device.is_cpu() && !src_device.is_cpu()) {
    EMBER_CUDA_CHECK(op, cudaStreamSynchronize(cudaStreamLegacy));
  }
}

int current_device() {
  int device = 0;
  EMBER_CUDA_CHECK("cuda", cudaGetDevice(&device));
  return device;
}

const DeviceBackend kBackend = {allocate, release, copy_bytes, device_count, current_device};

}  // namespace

int device_count() {
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();  // no driver or no device: not an error for the caller
      return 0;
    }
    return n < kMaxDevices ? n : kMaxDevices;
  }();
  return count;
}

bool register_backend() {
  if (device_count() == 0) return false;
  register_device_backend(DeviceType::CUDA, &kBackend);
  return true;
}

MemoryStats memory_stats(int device) {
  EMBER_CHECK(device >= 0 && device < device_count(), "[cuda] invalid device index ", device, " (",
              device_count(), " device(s))");
  return {g_counters[device].allocated.load(), g_counters[device].peak.load()};
}

void reset_peak_memory_stats(int device) {
  EMBER_CHECK(device >= 0 && device < device_count(), "[cuda] invalid device index ", device, " (",
              device_count(), " device(s))");
  g_counters[device].peak.store(g_counters[device].allocated.load());
}

DeviceGuard::DeviceGuard(int device) {
  EMBER_CUDA_CHECK("cuda", cudaGetDevice(&previous_));
  if (device != previous_) EMBER_CUDA_CHECK("cuda", cudaSetDevice(device));
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

}  // namespace ember::cuda
