// Public unary elementwise ops of ops/unary.h: the differentiable ones record their autograd
// node, then run the native op once. Each takes an optional `out`: undefined returns a new tensor,
// the input itself is the in-place form (`exp_`), any other tensor is out=.
#pragma once
#include <optional>

#include "core/scalar.h"
#include "core/tensor.h"
#include "ops/unary.h"

namespace ember {

// The float unary ops, one per row of tables/unary.def (integer and bool inputs give the
// default float dtype: exp(int) is float32). Each records the node its row names.
#define EMBER_UNARY_OP(name, ...) Tensor name(const Tensor& a, const Tensor& out = {});
#include "tables/unary.def"
#undef EMBER_UNARY_OP

#define EMBER_DECLARE_UNARY_OP(name) Tensor name(const Tensor& a, const Tensor& out = {});
// Result in the input's dtype. floor, ceil, round, trunc and sign record zero gradients.
EMBER_DECLARE_UNARY_OP(neg)
EMBER_DECLARE_UNARY_OP(sign)
EMBER_DECLARE_UNARY_OP(sgn)
EMBER_DECLARE_UNARY_OP(floor)
EMBER_DECLARE_UNARY_OP(ceil)
EMBER_DECLARE_UNARY_OP(round)
EMBER_DECLARE_UNARY_OP(trunc)
EMBER_DECLARE_UNARY_OP(frac)
EMBER_DECLARE_UNARY_OP(conj_physical)  // real input: the input itself (no node)
#undef EMBER_DECLARE_UNARY_OP

// Not differentiable: integer results and the bool predicates (isnan, ...).
using native::bitwise_not;
#define EMBER_USING_NATIVE(name) using native::name;
EMBER_PREDICATE_OPS(EMBER_USING_NATIVE)
#undef EMBER_USING_NATIVE
using native::positive;  // returns a itself (bool errors)

Tensor abs(const Tensor& a, const Tensor& out = {});     // complex -> real
Tensor angle(const Tensor& a, const Tensor& out = {});   // complex -> real; ints -> float
Tensor square(const Tensor& a, const Tensor& out = {});  // pow(a, 2): bool -> int64
Tensor round(const Tensor& a, int64_t decimals, const Tensor& out = {});
Tensor logit(const Tensor& a, std::optional<double> eps, const Tensor& out = {});
// Replacement values default to 0, the dtype's largest and lowest finite values.
Tensor nan_to_num(const Tensor& a, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf, const Tensor& out = {});
// clamp / clip with Python-number bounds (at least one given). The result dtype takes part of
// the bounds in type promotion: clamp(int_tensor, 0.5) is float32.
Tensor clamp(const Tensor& a, const std::optional<Scalar>& min, const std::optional<Scalar>& max,
             const Tensor& out = {});
// clamp with tensor bounds (either may be undefined, not both); broadcasting applies.
Tensor clamp(const Tensor& a, const Tensor& min, const Tensor& max, const Tensor& out = {});
// One bound (their own ops, with their own autograd nodes).
Tensor clamp_min(const Tensor& a, const Scalar& min, const Tensor& out = {});
Tensor clamp_max(const Tensor& a, const Scalar& max, const Tensor& out = {});
Tensor clamp_min(const Tensor& a, const Tensor& min, const Tensor& out = {});
Tensor clamp_max(const Tensor& a, const Tensor& max, const Tensor& out = {});
// polygamma(n, x): the n-th derivative of digamma (n >= 0); integers promote to float.
Tensor polygamma(int64_t n, const Tensor& a, const Tensor& out = {});

}  // namespace ember
