// ember.special's native ops (PyTorch's torch.special semantics): the Bessel and Airy functions,
// the normal distribution's ndtr / ndtri / log_ndtr, erfcx, entr, the regularised incomplete
// gamma functions, xlog1py, the Hurwitz zeta function, mvlgamma and the orthogonal polynomials.
// Each takes an optional `out`: undefined returns a new tensor, an input itself is the in-place
// form, any other tensor is out=.
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "kernels/special_stubs.h"

namespace ember {
namespace native {

// f(x) for a one-argument SpecialOp (i0 ... entr); `name` is the public op's name (errors and
// modified_bessel_i0 / i1, which run i0 / i1's kernel). Integers and bools promote to the
// default float dtype; complex inputs raise NotImplementedError, as do float16 / bfloat16 for
// the functions PyTorch computes in float32 / float64 only.
Tensor special_unary(SpecialOp op, const char* name, const Tensor& a, const Tensor& out = {});

// f(a, b) for a two-argument SpecialOp (igamma ... legendre_polynomial_p), broadcast. igamma and
// igammac keep the promoted dtype (integers raise NotImplementedError, as PyTorch); the others
// promote integers to the default float dtype.
Tensor special_binary(SpecialOp op, const char* name, const Tensor& a, const Tensor& b,
                      const Tensor& out = {});

// The multivariate log-gamma function of dimension p >= 1.
Tensor mvlgamma(const Tensor& a, int64_t p, const Tensor& out = {});

}  // namespace native
}  // namespace ember
