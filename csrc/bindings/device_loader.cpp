// Loads the CUDA backend the first time the core meets a "cuda" device, so that
// `x.cuda()` or `ember.zeros(3, device="cuda")` work without touching ember.cuda first, as in
// PyTorch. ember.cuda._load_backend imports ember._C_cuda and registers it when a GPU is there.
#include <cstdlib>
#include <cstring>

#include "bindings/pybind_ember.h"
#include "core/device_backend.h"

namespace ember {

namespace {
void load_device_backend(DeviceType type) {
  if (type != DeviceType::CUDA || !Py_IsInitialized()) return;
  py::gil_scoped_acquire gil;
  try {
    py::module_::import("ember.cuda").attr("_load_backend")();
  } catch (py::error_already_set&) {
    // No backend then: the caller raises its own error, which says why a device is missing.
    PyErr_Clear();
  }
}

// A stand-in "cuda" device in host memory, for the tests of the Python side of device tensors on
// machines without a GPU (tests/python/test_cuda.py runs it in a subprocess): one device whose
// memory comes from malloc and whose copies are memcpy. Host code still cannot read it through
// data() (it is not the CPU), so it behaves as device memory would, and the fill kernel, which
// only libember_cuda registers, is missing.
void* host_allocate(size_t nbytes, int, const char* op) {
  if (nbytes == 0) return nullptr;
  void* p = std::malloc(nbytes);
  EMBER_CHECK_T(OutOfMemoryError, p != nullptr, "[", op, "] out of memory (", nbytes, " bytes)");
  return p;
}
void host_release(void* ptr, size_t, int) noexcept {
  std::free(ptr);
}
void host_copy(void* dst, Device, const void* src, Device, size_t nbytes, const char*) {
  std::memcpy(dst, src, nbytes);
}
int one_device() {
  return 1;
}
int device_zero() {
  return 0;
}
const DeviceBackend kHostMemoryCuda = {host_allocate, host_release, host_copy, one_device,
                                       device_zero};
}  // namespace

void init_device_loader(py::module_& m) {
  set_device_backend_loader(load_device_backend);
  m.def(
      "_install_host_memory_cuda_for_tests",
      [] { register_device_backend(DeviceType::CUDA, &kHostMemoryCuda); },
      "Tests only: registers a stand-in 'cuda' device backed by host memory (irreversible for "
      "the process).");
}

}  // namespace ember
