// Kernel stubs of the random sampling ops (ops/random.h includes this header; the ops are
// ops/random.cpp, the kernels kernels/cpu/random_kernels.cpp and sampling_kernels.cpp), and how
// many values each kernel draws from one Philox block.
#pragma once
#include <cstdint>

#include "core/dtype.h"
#include "core/generator.h"
#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {

// Each kernel fills a contiguous `out` in index order. Value v of the op (element v, or for
// complex dtypes real/imag part v of the interleaved pairs) comes from counter block
// v / kValuesPerBlock, so the op knows how many blocks to reserve before the kernel runs.
enum class Continuous : uint8_t { Exponential, Geometric, LogNormal, Cauchy };

using UniformFn = void (*)(const Tensor& out, double from, double to, PhiloxState st);
using NormalFn = void (*)(const Tensor& out, double mean, double std, PhiloxState st);
// out = from + (random % range); range == 0 stands for 2^64.
using RandomIntFn = void (*)(const Tensor& out, int64_t from, uint64_t range, PhiloxState st);
// p_tensor undefined: every element uses p_scalar; else a float64 tensor of out's numel.
using BernoulliFn = void (*)(const Tensor& out, const Tensor& p_tensor, double p_scalar,
                             PhiloxState st);
using ContinuousFn = void (*)(const Tensor& out, Continuous kind, double a, double b,
                              PhiloxState st);
using RandpermFn = void (*)(const Tensor& out, PhiloxState st);
// probs: contiguous float64 (rows, categories); out: contiguous int64 (rows, num_samples).
using MultinomialFn = void (*)(const Tensor& out, const Tensor& probs, bool replacement,
                               PhiloxState st);

EMBER_DECLARE_STUB(uniform_stub, UniformFn);
EMBER_DECLARE_STUB(normal_stub, NormalFn);
EMBER_DECLARE_STUB(random_int_stub, RandomIntFn);
EMBER_DECLARE_STUB(bernoulli_stub, BernoulliFn);
EMBER_DECLARE_STUB(continuous_stub, ContinuousFn);
EMBER_DECLARE_STUB(randperm_stub, RandpermFn);
EMBER_DECLARE_STUB(multinomial_stub, MultinomialFn);

// Values drawn from one Philox block (four 32-bit words) by each kernel.
// float64 parts take two words per uniform; narrower floats take one.
inline int uniform_values_per_block(ScalarType t) {
  return to_real(t) == ScalarType::Float64 ? 2 : 4;
}
inline int normal_values_per_block(ScalarType t) {
  return to_real(t) == ScalarType::Float64 ? 2 : 4;
}
inline int random_int_values_per_block(uint64_t range) {
  return (range == 0 || range > (uint64_t(1) << 32)) ? 2 : 4;
}
constexpr int kBernoulliValuesPerBlock = 4;
constexpr int kContinuousValuesPerBlock = 2;
constexpr int kRandpermValuesPerBlock = 2;     // one 64-bit draw per swap
constexpr int kMultinomialValuesPerBlock = 2;  // one float64 uniform per draw or key

}  // namespace native
}  // namespace ember
