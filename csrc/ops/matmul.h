// The matmul family's native ops: matmul, mm, bmm, mv, dot, vdot, addmm, addmv, addbmm, baddbmm,
// cross, cdist. (inner, outer, tensordot, kron and einsum are composites of public ops, in
// api/matmul.h.)
//
// Every matrix product ends in gemm_stub (see kernels/gemm_stubs.h) after the shapes are checked
// and the operands are brought to a layout BLAS-like kernels take (one unit stride per matrix).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/scalar.h"
#include "core/tensor.h"

namespace ember {
namespace native {

Tensor matmul(const Tensor& a, const Tensor& b, const Tensor& out = {});
// matmul's check that runs before anything else (the api layer runs it before recording).
void check_matmul_args(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor bmm(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor mv(const Tensor& mat, const Tensor& vec, const Tensor& out = {});
Tensor dot(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor vdot(const Tensor& a, const Tensor& b, const Tensor& out = {});  // conj(a) . b

// beta * input + alpha * (m1 @ m2); beta == 0 ignores input's values (NaN included).
// `out` may be `input` itself (the in-place forms).
Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, const Scalar& beta = 1,
             const Scalar& alpha = 1, const Tensor& out = {});
Tensor addmv(const Tensor& input, const Tensor& mat, const Tensor& vec, const Scalar& beta = 1,
             const Scalar& alpha = 1, const Tensor& out = {});
// beta * input + alpha * sum_b(b1[b] @ b2[b])
Tensor addbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, const Scalar& beta = 1,
              const Scalar& alpha = 1, const Tensor& out = {});
// beta * input + alpha * (b1 @ b2), batched
Tensor baddbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, const Scalar& beta = 1,
               const Scalar& alpha = 1, const Tensor& out = {});

// dim nullopt: the first dim of size 3 (PyTorch's deprecated default).
Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim = {},
             const Tensor& out = {});
// cross's argument checks; returns the dim it works on (wrapped, of the broadcast shape).
int64_t cross_dim(const Tensor& a, const Tensor& b, std::optional<int64_t> dim);
// compute_mode: "use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
// "donot_use_mm_for_euclid_dist".
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2.0,
             const std::optional<std::string>& compute_mode = {});
// PyTorch's _cdist_backward: the gradient of dist = cdist(x1, x2, p) with respect to x1 (batch
// dims of x1 and x2 broadcast to dist's), for grad of dist's shape. One fused pass, no graph:
// the derivative table uses it when no double backward is being built.
Tensor cdist_backward(const Tensor& grad, const Tensor& x1, const Tensor& x2, double p,
                      const Tensor& dist);

}  // namespace native
}  // namespace ember
