// Public rejection samplers (ops/random_sampling.h). _standard_gamma records the implicit
// reparameterisation gradient (Note [Gamma reparameterisation gradient] in
// kernels/cpu/random_sampling_kernels.cpp); _sample_dirichlet, when its input requires grad, is
// the composite gamma / sum(gamma), whose gradient follows from _standard_gamma's.
#pragma once
#include "ops/random_sampling.h"

namespace ember {

Tensor _standard_gamma(const Tensor& alpha, Generator* gen = nullptr);
// Not differentiable itself: recording it leaves a node whose backward raises
// NotImplementedError (as PyTorch), so a double backward through a gamma sample fails loudly
// instead of treating the gradient as a constant.
Tensor _standard_gamma_grad(const Tensor& self, const Tensor& output);
Tensor _sample_dirichlet(const Tensor& alpha, Generator* gen = nullptr);
// Counts are not differentiable in their parameters: the results never require grad.
using native::binomial;
using native::poisson;

}  // namespace ember
