// Public ops of ember.special (ops/special.h): the differentiable ones record their autograd node
// (autograd/derivatives/special.cpp), then run the native op once; the others (the polynomials,
// airy_ai, the scaled K and spherical j0, which PyTorch does not differentiate) are the native
// ops themselves, so their results never require grad.
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "ops/special.h"

namespace ember {

using native::SpecialOp;

// f(x) for a one-argument SpecialOp; `name` is the public name (modified_bessel_i0 runs i0 with
// its own node name).
Tensor special_unary(SpecialOp op, const char* name, const Tensor& a, const Tensor& out = {});
// f(a, b) for a two-argument SpecialOp, broadcast.
Tensor special_binary(SpecialOp op, const char* name, const Tensor& a, const Tensor& b,
                      const Tensor& out = {});
// The multivariate log-gamma function of dimension p >= 1 (MvlgammaBackward0).
Tensor mvlgamma(const Tensor& a, int64_t p, const Tensor& out = {});

// Whether PyTorch differentiates op (with respect to at least one input).
bool special_is_differentiable(SpecialOp op);

}  // namespace ember
