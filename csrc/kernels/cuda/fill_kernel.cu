// One value into every element of a tensor on the GPU: fill_, zeros, ones, full on "cuda".
#include <cstring>

#include "kernels/cuda/fill_launch.h"

namespace ember::cuda {
namespace {

// The element as raw bytes: a fill never needs the dtype, only its width.
template <int N>
struct alignas(N) Bytes {
  unsigned char b[N];
};

template <typename E>
__global__ void fill_contiguous(E* out, int64_t numel, E value) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < numel;
       i += int64_t(gridDim.x) * blockDim.x) {
    out[i] = value;
  }
}

template <typename E>
__global__ void fill_strided(E* out, int64_t numel, E value, FillGeometry g) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < numel;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t rest = i, offset = 0;
    for (int d = g.ndim - 1; d >= 0; --d) {
      offset += (rest % g.sizes[d]) * g.strides[d];
      rest /= g.sizes[d];
    }
    out[offset] = value;
  }
}

template <int N>
cudaError_t launch(void* data, const FillGeometry& g, int64_t numel, bool contiguous,
                   const void* pattern, cudaStream_t stream) {
  using E = Bytes<N>;
  E value;
  std::memcpy(&value, pattern, N);
  constexpr int kThreads = 256;
  // Enough blocks to fill the GPU; the grid-stride loops cover the rest.
  const int64_t wanted = (numel + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(wanted < 65535 ? wanted : 65535);
  if (contiguous) {
    fill_contiguous<E><<<blocks, kThreads, 0, stream>>>(static_cast<E*>(data), numel, value);
  } else {
    fill_strided<E><<<blocks, kThreads, 0, stream>>>(static_cast<E*>(data), numel, value, g);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_fill(void* data, const FillGeometry& geometry, int64_t numel, bool contiguous,
                        const void* pattern, int itemsize, cudaStream_t stream) {
  if (numel == 0) return cudaSuccess;
  switch (itemsize) {
    case 1:
      return launch<1>(data, geometry, numel, contiguous, pattern, stream);
    case 2:
      return launch<2>(data, geometry, numel, contiguous, pattern, stream);
    case 4:
      return launch<4>(data, geometry, numel, contiguous, pattern, stream);
    case 8:
      return launch<8>(data, geometry, numel, contiguous, pattern, stream);
    case 16:
      return launch<16>(data, geometry, numel, contiguous, pattern, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace ember::cuda
