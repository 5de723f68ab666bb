// Kernel stub of ember.linalg's matrix_exp (ops/linalg/misc.h includes this header; the op is
// ops/linalg/matrix_exp.cpp, the kernel kernels/cpu/linalg/matrix_exp_kernel.cpp).
#pragma once
#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {

// out[b] = exp(a[b]) for a contiguous (batch, n, n) float32/float64/complex `a` with n >= 2;
// `out` has the same shape and dtype, contiguous.
using MatrixExpFn = void (*)(const Tensor& out, const Tensor& a);
EMBER_DECLARE_STUB(matrix_exp_stub, MatrixExpFn);

}  // namespace native
}  // namespace ember
