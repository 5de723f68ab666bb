// Kernel stubs of the matrix-product family (the ops are ops/matmul*.cpp; ops/gemm.h and
// ops/matmul_common.h include this header). The device-generic GEMM interface under every
// matrix product:
//   C[b] (m x n) = alpha * A[b] (m x k) @ B[b] (k x n) + beta * C[b]      for b < batch
// Strides are in elements. The ops layer guarantees: m, n, k, batch >= 1; A and B each have a
// unit row or column stride (the other one at least the matrix extent); C has col_stride 1;
// a batch stride of 0 broadcasts one matrix over the batch (A and B only). beta == 0 means C
// is write-only: its old values (NaN included) never reach the result.
#pragma once
#include "core/scalar.h"
#include "core/tensor.h"
#include "dispatch/stub.h"
#include "dispatch/tensor_iterator.h"

namespace ember {
namespace native {

struct GemmMatrix {
  void* data = nullptr;  // element (0, 0) of batch 0
  int64_t batch_stride = 0;
  int64_t row_stride = 0;
  int64_t col_stride = 0;
};

struct GemmParams {
  ScalarType dtype = ScalarType::Undefined;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  GemmMatrix a, b, c;
  Scalar alpha = Scalar(int64_t(1));
  Scalar beta = Scalar(int64_t(0));
};

using GemmFn = void (*)(const GemmParams& p);
EMBER_DECLARE_STUB(gemm_stub, GemmFn);

// Work fused into a GEMM's output, for the transformer fastpath's linears (one pass over C
// instead of three): C = act(A @ B + bias) + residual. The GEMM has batch 1, alpha 1, beta 0.
enum class GemmActivation : int { None = 0, Relu = 1, Gelu = 2 };  // gelu: the erf form
struct GemmEpilogue {
  const void* bias = nullptr;  // n values of C's dtype, or null
  GemmActivation activation = GemmActivation::None;
  const void* residual = nullptr;  // m x n of C's dtype, column stride 1, or null
  int64_t residual_row_stride = 0;
};
using GemmEpilogueFn = void (*)(const GemmParams& p, const GemmEpilogue& e);
EMBER_DECLARE_STUB(gemm_epilogue_stub, GemmEpilogueFn);

// float32 GEMMs (batch 1, alpha 1, beta 0 or 1) through Ember's own packed AVX-512 kernel, with
// `epilogue` (optional) fused, for the shapes and layouts where it was measured faster than
// oneDNN on Intel cores (Note [A packed float32 GEMM for wide products],
// kernels/cpu/gemm_packed_kernels.cpp). Returns false, having done nothing, everywhere else and
// below the avx512 level.
using PackedSgemmFn = bool (*)(const GemmParams& p, const GemmEpilogue* epilogue);
EMBER_DECLARE_STUB(packed_sgemm_stub, PackedSgemmFn);
// When gemm_stub and gemm_epilogue_stub try packed_sgemm_stub first. Thread-safe.
enum class PackedSgemmMode : int {
  Off = 0,     // never (for A/B measurements against oneDNN)
  Auto = 1,    // the default: Intel cores, the measured shapes
  Always = 2,  // every float32 product it can lay out, on any AVX-512 core (for tests)
};
PackedSgemmMode packed_sgemm_mode();
void set_packed_sgemm_mode(PackedSgemmMode mode);

// float32 matrix-vector products, the GEMMs with m == 1 or n == 1 whose matrix operand is
// contiguous along k (a Linear at batch 1, mv): y[i * incy] = alpha * sum_k a[i * lda + k] *
// x[k] (+ beta * y[i * incy] when beta != 0; beta == 0 never reads y) for i < rows. x is
// contiguous. One kernel per CPU level: a GEMM library's blocking buys nothing here, the work
// is one pass over the matrix (oneDNN's took twice the memory-bound time at AVX-512).
struct GemvArgs {
  const float* a = nullptr;
  int64_t rows = 0, k = 0, lda = 0;
  const float* x = nullptr;
  float* y = nullptr;
  int64_t incy = 1;
  float alpha = 1.f, beta = 0.f;
};
using GemvFn = void (*)(const GemvArgs& args);
EMBER_DECLARE_STUB(gemv_f32_stub, GemvFn);

// out (0-d, the inputs' dtype) = sum_i f(x[i]) * y[i] with f = conj when conj_x.
using DotFn = void (*)(void* out, ScalarType dtype, int64_t n, const void* x, int64_t incx,
                       const void* y, int64_t incy, bool conj_x);
EMBER_DECLARE_STUB(dot_stub, DotFn);

// Cross product along a dim of size 3: iter runs over (out, a, b), same shape and dtype, each
// narrowed to index 0 along that dim; component k of an element lies k * stride bytes after it
// (out_stride, a_stride, b_stride: the operands' byte strides along the dim).
using CrossFn = void (*)(TensorIterator& iter, int64_t out_stride, int64_t a_stride,
                         int64_t b_stride);
EMBER_DECLARE_STUB(cross_stub, CrossFn);

// cdist kernels. x1 (B, P, M), x2 (B, R, M), out (B, P, R), all contiguous, float32/float64.
using CdistFn = void (*)(const Tensor& out, const Tensor& x1, const Tensor& x2, double p);
EMBER_DECLARE_STUB(cdist_stub, CdistFn);
// out holds -2 * x1 @ x2^T; adds the squared norms, clamps at 0 and takes the square root.
using CdistFinishFn = void (*)(const Tensor& out, const Tensor& x1, const Tensor& x2);
EMBER_DECLARE_STUB(cdist_mm_finish_stub, CdistFinishFn);
// Kernel of cdist_backward: out (B, P, M) <- the gradient of cdist for x1 (B, P, M) given x2
// (B, R, M), grad and dist (B, P, R); all contiguous, float32/float64, p > 0.
using CdistBackwardFn = void (*)(const Tensor& out, const Tensor& grad, const Tensor& x1,
                                 const Tensor& x2, const Tensor& dist, double p);
EMBER_DECLARE_STUB(cdist_backward_stub, CdistBackwardFn);

}  // namespace native
}  // namespace ember
