// CPU GEMM back ends (see kernels/gemm_stubs.h for the contract). gemm_kernel.cpp picks one
// per dtype:
//   float32, bfloat16 (and float16 when oneDNN has a native kernel): oneDNN's matmul primitive,
//     except on Intel AVX-512 cores: the widest float32 Linears and some input gradients run
//     Ember's packed kernel (packed_sgemm_stub, gemm_packed_kernels.cpp), some large float32
//     gradient products OpenBLAS's sgemm
//   float64: OpenBLAS's dgemm (scipy-openblas32) from 8x8x8 up, Eigen below
//   complex64, complex128: Eigen
//   integers (and anything oneDNN declines): the cache-blocked reference loops below
#pragma once
#include "kernels/gemm_stubs.h"

namespace ember {
namespace native {

// Runs p through a cached oneDNN matmul primitive. Returns false (having done nothing) when
// oneDNN offers only its slow reference implementation for this dtype/layout. `epilogue`
// (optional) is fused as oneDNN bias and post-ops.
bool onednn_gemm(const GemmParams& p, const GemmEpilogue* epilogue = nullptr);
// float64 through OpenBLAS's dgemm. Returns false (having done nothing) for other dtypes, tiny
// products, and when OpenBLAS is busy elsewhere (see gemm_openblas.cpp).
bool openblas_gemm(const GemmParams& p);
// float32 products on Intel AVX-512 cores through OpenBLAS's sgemm, for the shapes and layouts
// where it was measured faster than oneDNN: weight gradients (A transposed) and input gradients
// with a long reduction (Note [float32 weight gradients through OpenBLAS]). Returns false
// (having done nothing) elsewhere.
bool openblas_sgemm(const GemmParams& p);
// float64 / complex64 / complex128 through Eigen's GEMM.
void eigen_gemm(const GemmParams& p);
// Integer dtypes (exact, wrapping like PyTorch's) and float fallbacks: blocked loops.
void blocked_gemm(const GemmParams& p);

}  // namespace native
}  // namespace ember
