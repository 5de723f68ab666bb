// Internal plumbing shared by the matmul-family op files (not a public API).
#pragma once
#include <initializer_list>

#include "core/scalar.h"
#include "core/tensor.h"
#include "dispatch/stub.h"
#include "kernels/gemm_stubs.h"

namespace ember {
namespace native {

// out (B, m, n; col stride 1, row stride >= n) = alpha * a (B, m, k) @ b (B, k, n) + beta * out.
// a and b may have any strides (batch stride 0 broadcasts); they are copied only when no
// unit-stride layout exists. Handles k == 0 (out = beta * out) and empty results.
// out <- beta * out (zeros when beta == 0, whatever out held): a GEMM with nothing to add.
void scale_by_beta(const Tensor& out, const Scalar& beta);
void gemm_into(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha,
               const Scalar& beta, const char* op);

// A (B, r, c) tensor with t's values whose batch dims (all but the last two) are merged into
// one; a copy only when the batch dims cannot be merged by a view.
Tensor merge_batch_dims(const Tensor& t);

// The tensor an op computes into: `out` itself when given, contiguous and not sharing memory
// with any input (after its dtype is checked and it is resized), else a fresh contiguous tensor.
Tensor output_target(const Tensor& out, IntArrayRef shape, ScalarType dtype,
                     std::initializer_list<const Tensor*> inputs, const char* op);
// Copies target into out when they differ; returns the caller-visible result.
Tensor finish_target(const Tensor& target, const Tensor& out, const char* op);

// Raises the error PyTorch gives for a matrix product over an unsupported dtype (bool).
void check_matmul_dtype(ScalarType t, const char* op);
// Rejects a complex alpha/beta for a real dtype (PyTorch: "value cannot be converted").
void check_scalar_for(const Scalar& s, ScalarType t, const char* op);
bool scalar_is_zero(const Scalar& s);

// The kernel stubs of the family (gemm_stub, cdist_backward_stub, ...) are in
// kernels/gemm_stubs.h.

}  // namespace native
}  // namespace ember
