// The fill kernel's launcher, kept free of Ember's headers so that nvcc compiles only this
// interface and fill_kernel.cu (cuda_fill.cpp is the C++ side).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

namespace ember::cuda {

constexpr int kMaxFillDims = 16;

// Sizes and strides (in elements) of the tensor to fill, innermost last.
struct FillGeometry {
  int64_t sizes[kMaxFillDims];
  int64_t strides[kMaxFillDims];
  int ndim;
};

// Writes the `itemsize`-byte `pattern` (1, 2, 4, 8 or 16 bytes) at every one of the `numel`
// elements of the tensor at `data`; `contiguous` skips the index arithmetic. Queues the kernel on
// `stream` and returns its launch status.
cudaError_t launch_fill(void* data, const FillGeometry& geometry, int64_t numel, bool contiguous,
                        const void* pattern, int itemsize, cudaStream_t stream);

}  // namespace ember::cuda
