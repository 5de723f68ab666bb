// Errors from the CUDA runtime as Ember exceptions naming the op: a failed CUDA call never
// aborts, it raises RuntimeError (MemoryError for an allocation) in Python.
#pragma once
#include <cuda_runtime_api.h>

#include "core/error.h"

namespace ember::cuda {

[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* op, const char* call) {
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // clear the sticky-free error so that later calls do not report it
    EMBER_THROW(OutOfMemoryError, "[", op, "] CUDA out of memory in ", call, ": ",
                cudaGetErrorString(status));
  }
  EMBER_THROW(Error, "[", op, "] CUDA error in ", call, ": ", cudaGetErrorName(status), " (",
              cudaGetErrorString(status), ")");
}

}  // namespace ember::cuda

// Calls a CUDA runtime function and raises the error it returns, naming `op`.
#define EMBER_CUDA_CHECK(op, call)                                      \
  do {                                                                  \
    const cudaError_t ember_cuda_status_ = (call);                      \
    if (ember_cuda_status_ != cudaSuccess)                              \
      ::ember::cuda::throw_cuda_error(ember_cuda_status_, (op), #call); \
  } while (0)
