// Sampling ops that need rejection or special algorithms (gamma, Dirichlet, Poisson, binomial)
// and the implicit reparameterisation gradient of the gamma sample. They back
// ember.distributions (docs/design/distributions.md) and draw from an ember Generator (nullptr:
// the default one), one Philox sub-stream per element: see Note [Per-element Philox streams] in
// kernels/random_sampling_stubs.h.
#pragma once
#include "core/generator.h"
#include "core/tensor.h"
#include "kernels/random_sampling_stubs.h"

namespace ember {
namespace native {

// Gamma(alpha, 1) samples, one per element of a floating `alpha`; the result has alpha's shape
// and dtype. Samples are clamped below to the dtype's smallest normal number (PyTorch does the
// same, so that log(sample) is finite); alpha < 0 or NaN gives NaN.
Tensor _standard_gamma(const Tensor& alpha, Generator* gen = nullptr);

// d sample / d alpha of a Gamma(alpha, 1) sample `output` at fixed CDF value (implicit
// reparameterisation): -(dP(alpha, x)/d alpha) / p(x; alpha). self and output broadcast;
// the result has their promoted floating dtype.
Tensor _standard_gamma_grad(const Tensor& self, const Tensor& output);

// Dirichlet(alpha) samples along the last dimension of `alpha` (at least 1-D): normalised
// independent gamma samples.
Tensor _sample_dirichlet(const Tensor& alpha, Generator* gen = nullptr);

// Poisson(rate) counts, stored in rate's floating dtype. A negative rate is an error.
Tensor poisson(const Tensor& rates, Generator* gen = nullptr);

// Binomial(count, prob) counts in the promoted floating dtype of count and prob (broadcast).
// count must be >= 0 and prob in [0, 1].
Tensor binomial(const Tensor& count, const Tensor& prob, Generator* gen = nullptr);

}  // namespace native
}  // namespace ember
