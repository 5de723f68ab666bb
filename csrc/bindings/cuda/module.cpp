// ember._C_cuda: the CUDA backend's Python module (docs/design/cuda.md). ember.cuda imports it on
// first use; importing it needs the CUDA runtime library, not a GPU. register_backend() makes
// "cuda" a device the core can allocate on, when a GPU is there.
#include <cuda_runtime_api.h>

#include "bindings/cuda/pybind_cuda.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_device.h"

namespace ember {
namespace {

using nogil = py::call_guard<py::gil_scoped_release>;

int checked_device(int device, const char* op) {
  const int count = cuda::device_count();
  if (device < 0) {
    EMBER_CHECK(count > 0, "[", op, "] no CUDA device is available");
    int current = 0;
    EMBER_CUDA_CHECK(op, cudaGetDevice(&current));
    return current;
  }
  EMBER_CHECK_T(ValueError, device < count, "[", op, "] invalid device index ", device, ": ", count,
                " CUDA device(s)");
  return device;
}

py::dict device_properties(int device) {
  device = checked_device(device, "get_device_properties");
  cudaDeviceProp prop{};
  EMBER_CUDA_CHECK("get_device_properties", cudaGetDeviceProperties(&prop, device));
  py::dict d;
  d["name"] = std::string(prop.name);
  d["major"] = prop.major;
  d["minor"] = prop.minor;
  d["total_memory"] = static_cast<int64_t>(prop.totalGlobalMem);
  d["multi_processor_count"] = prop.multiProcessorCount;
  return d;
}

}  // namespace
}  // namespace ember

PYBIND11_MODULE(_C_cuda, m) {
  using namespace ember;
  m.doc() = "Ember's CUDA backend";
  m.def("device_count", &cuda::device_count);
  m.def("register_backend", &cuda::register_backend);
  m.def("runtime_version", [] {
    int v = 0;
    EMBER_CUDA_CHECK("cuda", cudaRuntimeGetVersion(&v));
    return v;
  });
  m.def("current_device", [] { return checked_device(-1, "current_device"); });
  m.def("set_device", [](int device) {
    device = checked_device(device, "set_device");
    EMBER_CUDA_CHECK("set_device", cudaSetDevice(device));
  });
  m.def(
      "synchronize",
      [](int device) {
        cuda::DeviceGuard guard(checked_device(device, "synchronize"));
        EMBER_CUDA_CHECK("synchronize", cudaDeviceSynchronize());
      },
      py::arg("device") = -1, nogil());
  m.def("device_properties", &device_properties, py::arg("device") = -1);
  m.def(
      "memory_allocated",
      [](int device) {
        return cuda::memory_stats(checked_device(device, "memory_allocated")).allocated_bytes;
      },
      py::arg("device") = -1);
  m.def(
      "max_memory_allocated",
      [](int device) {
        return cuda::memory_stats(checked_device(device, "max_memory_allocated"))
            .peak_allocated_bytes;
      },
      py::arg("device") = -1);
  m.def(
      "reset_peak_memory_stats",
      [](int device) { cuda::reset_peak_memory_stats(checked_device(device, "reset_peak")); },
      py::arg("device") = -1);
  m.def(
      "mem_get_info",
      [](int device) {
        cuda::DeviceGuard guard(checked_device(device, "mem_get_info"));
        size_t free_bytes = 0, total_bytes = 0;
        EMBER_CUDA_CHECK("mem_get_info", cudaMemGetInfo(&free_bytes, &total_bytes));
        return py::make_tuple(free_bytes, total_bytes);
      },
      py::arg("device") = -1);
}
