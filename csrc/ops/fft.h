// The three FFT primitives every ember.fft function is made of (api/fft.cpp composes them, as
// PyTorch composes its _fft_c2c / _fft_r2c / _fft_c2r): complex-to-complex, real-to-complex and
// complex-to-real transforms over a list of dims, with a normalisation mode.
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "dispatch/stub.h"
#include "kernels/fft_stubs.h"

namespace ember {
namespace native {

// PyTorch's fft_norm_mode: the result is multiplied by 1, 1 / sqrt(N) or 1 / N, N being the
// product of the signal sizes along the transformed dims.
enum class FftNorm : int64_t { kNone = 0, kByRootN = 1, kByN = 2 };

// dims: distinct and already wrapped. Results are new contiguous tensors.
// complex64/128 self -> same dtype; forward: e^{-2 pi i ...}.
Tensor fft_c2c(const Tensor& self, IntArrayRef dims, FftNorm norm, bool forward);
// float32/64 self -> complex64/128; the last of dims keeps n / 2 + 1 entries when onesided.
Tensor fft_r2c(const Tensor& self, IntArrayRef dims, FftNorm norm, bool onesided);
// complex64/128 self (Hermitian along dims.back(), of which self holds at least
// last_dim_size / 2 + 1 entries) -> float32/64 with last_dim_size entries along dims.back().
// Always the inverse direction (e^{+2 pi i ...}).
Tensor fft_c2r(const Tensor& self, IntArrayRef dims, FftNorm norm, int64_t last_dim_size);

// The kernel stubs are in kernels/fft_stubs.h.

}  // namespace native
}  // namespace ember
