// Kernel stubs of the rejection samplers and the gamma reparameterisation gradient
// (ops/random_sampling.h; kernels in kernels/cpu/random_sampling_kernels.cpp).
//
// Note [Per-element Philox streams]: a rejection sampler uses a data-dependent number of
// uniforms per element, so the fixed values-per-block scheme of kernels/random_stubs.h does not
// fit. Instead the op reserves one counter per element (n blocks for n elements) and element i
// draws its k-th block of four words from Philox(counter = (offset + i, k), key = seed): the
// 64-bit counter in words 0-1 and the draw index k in word 2. Words 2 and 3 are zero in every
// other op, and counter offset + i belongs to this op alone, so streams never overlap; each
// element's value depends only on (seed, offset, i), whatever the thread count.
#pragma once
#include "core/generator.h"
#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {

// Inputs are contiguous float64 tensors of out's numel (alpha of _sample_dirichlet: out's
// shape); out is contiguous and floating.
using StandardGammaFn = void (*)(const Tensor& out, const Tensor& alpha, PhiloxState st);
using StandardGammaGradFn = void (*)(const Tensor& out, const Tensor& alpha, const Tensor& x);
using SampleDirichletFn = void (*)(const Tensor& out, const Tensor& alpha, PhiloxState st);
using PoissonFn = void (*)(const Tensor& out, const Tensor& rate, PhiloxState st);
using BinomialFn = void (*)(const Tensor& out, const Tensor& count, const Tensor& prob,
                            PhiloxState st);

EMBER_DECLARE_STUB(standard_gamma_stub, StandardGammaFn);
EMBER_DECLARE_STUB(standard_gamma_grad_stub, StandardGammaGradFn);
EMBER_DECLARE_STUB(sample_dirichlet_stub, SampleDirichletFn);
EMBER_DECLARE_STUB(poisson_stub, PoissonFn);
EMBER_DECLARE_STUB(binomial_stub, BinomialFn);

}  // namespace native
}  // namespace ember
