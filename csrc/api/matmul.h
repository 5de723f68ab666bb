// Public matrix products (ops/matmul.h): the differentiable ones record their node here
// (api/matmul.cpp) and run the native op once; inner, outer, tensordot, kron and einsum are
// composites of public ops (api/matmul.cpp, api/matmul_einsum.cpp); cdist_backward is native.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ops/matmul.h"

namespace ember {

Tensor matmul(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor mm(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor bmm(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor mv(const Tensor& mat, const Tensor& vec, const Tensor& out = {});
Tensor dot(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor vdot(const Tensor& a, const Tensor& b, const Tensor& out = {});  // conj(a) . b
Tensor inner(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor outer(const Tensor& a, const Tensor& b, const Tensor& out = {});

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

// Contracts dims_a of a with dims_b of b.
Tensor tensordot(const Tensor& a, const Tensor& b, IntArrayRef dims_a, IntArrayRef dims_b,
                 const Tensor& out = {});
// The int form: the last `dims` dims of a with the first `dims` of b.
Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims, const Tensor& out = {});
Tensor kron(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);
// dim nullopt: the first dim of size 3 (PyTorch's deprecated default).
Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim = {},
             const Tensor& out = {});
// compute_mode: "use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
// "donot_use_mm_for_euclid_dist".
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2.0,
             const std::optional<std::string>& compute_mode = {});
using native::cdist_backward;

}  // namespace ember
