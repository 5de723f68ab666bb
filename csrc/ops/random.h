// Random sampling ops: in-place distributions (uniform_, normal_, random_, bernoulli_, ...) and
// the factories built on them (rand, randn, randint, randperm, normal, bernoulli, multinomial).
// Every op takes an optional Generator (nullptr: the default generator) and reserves its Philox
// counters up front; see Note [Philox counter reservation] in core/generator.h.
#pragma once
#include <optional>

#include "core/generator.h"
#include "core/tensor.h"
#include "dispatch/stub.h"
#include "ops/creation.h"

namespace ember {
namespace native {

// --- kernels -------------------------------------------------------------------------------
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

// --- in-place distributions (return self) ---------------------------------------------------
Tensor& uniform_(Tensor& self, double from, double to, Generator* gen = nullptr);
Tensor& normal_(Tensor& self, double mean, double std, Generator* gen = nullptr);
// random_(): [0, 2^mantissa] for floats, [0, max] for integers; random_(to): [0, to);
// random_(from, to): [from, to); to = nullopt with from: [from, max].
Tensor& random_(Tensor& self, std::optional<int64_t> from, std::optional<int64_t> to,
                Generator* gen = nullptr);
Tensor& bernoulli_(Tensor& self, double p, Generator* gen = nullptr);
Tensor& bernoulli_(Tensor& self, const Tensor& p, Generator* gen = nullptr);
Tensor& exponential_(Tensor& self, double lambd, Generator* gen = nullptr);
Tensor& geometric_(Tensor& self, double p, Generator* gen = nullptr);
Tensor& log_normal_(Tensor& self, double mean, double std, Generator* gen = nullptr);
Tensor& cauchy_(Tensor& self, double median, double sigma, Generator* gen = nullptr);

// --- factories --------------------------------------------------------------------------------
Tensor rand(IntArrayRef size, TensorOptions opts = {}, Generator* gen = nullptr);
Tensor randn(IntArrayRef size, TensorOptions opts = {}, Generator* gen = nullptr);
// dtype defaults to int64.
Tensor randint(int64_t low, int64_t high, IntArrayRef size, TensorOptions opts = {},
               Generator* gen = nullptr);
Tensor randperm(int64_t n, TensorOptions opts = {}, Generator* gen = nullptr);

// normal's four overloads. The tensor forms broadcast mean and std; the result has mean's
// dtype (std's when mean is a number).
Tensor normal(const Tensor& mean, const Tensor& std, Generator* gen = nullptr);
Tensor normal(const Tensor& mean, double std, Generator* gen = nullptr);
Tensor normal(double mean, const Tensor& std, Generator* gen = nullptr);
Tensor normal(double mean, double std, IntArrayRef size, TensorOptions opts = {},
              Generator* gen = nullptr);

// Draws 0/1 with probability `p` (each element of a floating tensor), result dtype of p.
Tensor bernoulli(const Tensor& p, Generator* gen = nullptr);
// Same shape and dtype as self, each element 1 with probability p.
Tensor bernoulli(const Tensor& self, double p, Generator* gen = nullptr);
// Indices sampled from the rows of a 1-D or 2-D tensor of non-negative weights.
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement = false,
                   Generator* gen = nullptr);

}  // namespace native
}  // namespace ember
