// Kernel stubs of the FFTs (ops/fft.h includes this header; the op is ops/fft.cpp, the kernels
// kernels/cpu/fft_kernels.cpp on the plans of kernels/cpu/fft_plan.h). Each transforms along one
// dim; the op chains them for several dims. The result is multiplied by `scale`.
#pragma once
#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {

// out (complex, self's shape and dtype; may be self) = the DFT along dim of complex self,
// e^{-2 pi i jk/n} when forward, e^{+...} otherwise.
using FftC2CFn = void (*)(const Tensor& out, const Tensor& self, int64_t dim, bool forward,
                          double scale);
EMBER_DECLARE_STUB(fft_c2c_stub, FftC2CFn);
// out (complex of self's precision; self's shape but out.size(dim) = n / 2 + 1 when onesided, n
// otherwise, n = self.size(dim)) = the forward DFT along dim of real self.
using FftR2CFn = void (*)(const Tensor& out, const Tensor& self, int64_t dim, double scale);
EMBER_DECLARE_STUB(fft_r2c_stub, FftR2CFn);
// out (real of self's precision; n = out.size(dim)) = the inverse DFT along dim of the Hermitian
// signal whose first n / 2 + 1 entries are self's (self.size(dim) >= n / 2 + 1); the imaginary
// parts of entry 0 (and of entry n / 2 for even n) are ignored, as a real signal's are zero.
using FftC2RFn = void (*)(const Tensor& out, const Tensor& self, int64_t dim, double scale);
EMBER_DECLARE_STUB(fft_c2r_stub, FftC2RFn);

}  // namespace native
}  // namespace ember
