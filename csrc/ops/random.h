// Random sampling ops: in-place distributions (uniform_, normal_, random_, bernoulli_, ...) and
// the factories built on them (rand, randn, randint, randperm, normal, bernoulli, multinomial).
// Every op takes an optional Generator (nullptr: the default generator) and reserves its Philox
// counters up front; see Note [Philox counter reservation] in core/generator.h.
#pragma once
#include <optional>

#include "core/generator.h"
#include "core/tensor.h"
#include "dispatch/stub.h"
#include "kernels/random_stubs.h"
#include "ops/creation.h"

namespace ember {
namespace native {

// The kernel stubs and the values each kernel draws per Philox block are in
// kernels/random_stubs.h.

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

// normal(mean, std, size): samples of N(mean, std^2).
Tensor normal(double mean, double std, IntArrayRef size, TensorOptions opts = {},
              Generator* gen = nullptr);
// normal's tensor forms (a tensor mean or std, broadcast) are composites, public ops only
// (api/random.h): noise * std + mean, with the noise drawn here after their checks: N(0, 1) of the
// result's shape and dtype (mean's, or std's when mean is a number), or N(0, std) when std is a
// number (then not applied again).
Tensor normal_noise(const Tensor& mean, const Tensor& std, Generator* gen);
Tensor normal_noise(const Tensor& mean, double std, Generator* gen);
Tensor normal_noise(double mean, const Tensor& std, Generator* gen);

// Draws 0/1 with probability `p` (each element of a floating tensor), result dtype of p.
Tensor bernoulli(const Tensor& p, Generator* gen = nullptr);
// Same shape and dtype as self, each element 1 with probability p.
Tensor bernoulli(const Tensor& self, double p, Generator* gen = nullptr);
// Indices sampled from the rows of a 1-D or 2-D tensor of non-negative weights.
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement = false,
                   Generator* gen = nullptr);

}  // namespace native
}  // namespace ember
