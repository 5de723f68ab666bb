// Unary elementwise ops (PyTorch semantics). Each takes an optional `out`: undefined returns a
// new tensor, the input itself is the in-place form (`exp_`), any other tensor is out=.
#pragma once
#include <optional>

#include "core/scalar.h"
#include "core/tensor.h"
#include "kernels/unary_stubs.h"

namespace ember {
namespace native {

// The float unary ops, one per row of tables/unary.def: integer and bool inputs give the default
// float dtype (exp(int) is float32).
#define EMBER_UNARY_OP(name, ...) Tensor name(const Tensor& a, const Tensor& out = {});
#include "tables/unary.def"
#undef EMBER_UNARY_OP

#define EMBER_DECLARE_UNARY_OP(name) Tensor name(const Tensor& a, const Tensor& out = {});
// Result in the input's dtype: neg, floor, ...
EMBER_SAME_DTYPE_UNARY_OPS(EMBER_DECLARE_UNARY_OP)
// Bool results: isnan, ...
EMBER_PREDICATE_OPS(EMBER_DECLARE_UNARY_OP)
#undef EMBER_DECLARE_UNARY_OP

Tensor abs(const Tensor& a, const Tensor& out = {});    // complex -> real
Tensor angle(const Tensor& a, const Tensor& out = {});  // complex -> real; ints -> float
Tensor positive(const Tensor& a);                       // returns a itself (bool errors)
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
// One bound (their own ops in PyTorch: the api layer gives them their own nodes).
Tensor clamp_min(const Tensor& a, const Scalar& min, const Tensor& out = {});
Tensor clamp_max(const Tensor& a, const Scalar& max, const Tensor& out = {});
Tensor clamp_min(const Tensor& a, const Tensor& min, const Tensor& out = {});
Tensor clamp_max(const Tensor& a, const Tensor& max, const Tensor& out = {});
// polygamma(n, x): the n-th derivative of digamma (n >= 0); integers promote to float.
Tensor polygamma(int64_t n, const Tensor& a, const Tensor& out = {});

}  // namespace native
}  // namespace ember
