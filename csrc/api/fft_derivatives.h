// The recording forms of the FFT primitives (built in autograd/derivatives/fft.cpp): each makes
// its node (FftC2CBackward0, FftR2CBackward0, FftC2RBackward0) and runs the native op once.
#pragma once
#include "ops/fft.h"

namespace ember {
namespace derivatives {

Tensor fft_c2c(const Tensor& self, IntArrayRef dims, native::FftNorm norm, bool forward);
Tensor fft_r2c(const Tensor& self, IntArrayRef dims, native::FftNorm norm, bool onesided);
Tensor fft_c2r(const Tensor& self, IntArrayRef dims, native::FftNorm norm, int64_t last_dim_size);

}  // namespace derivatives
}  // namespace ember
