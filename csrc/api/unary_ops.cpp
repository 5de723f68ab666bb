// Public unary elementwise ops: the autograd node when recording, else the native op.
#include "api/unary_ops.h"

#include "api/binary_ops.h"
#include "autograd/derivatives/elementwise.h"
#include "autograd/variable.h"

namespace ember {

#define EMBER_DEFINE_RECORDED_UNARY_OP(name)                          \
  Tensor name(const Tensor& a, const Tensor& out) {                   \
    if (autograd::should_record(a)) return derivatives::name(a, out); \
    return native::name(a, out);                                      \
  }
EMBER_FLOAT_UNARY_OPS(EMBER_DEFINE_RECORDED_UNARY_OP)
EMBER_DEFINE_RECORDED_UNARY_OP(neg)
EMBER_DEFINE_RECORDED_UNARY_OP(sgn)
EMBER_DEFINE_RECORDED_UNARY_OP(frac)
EMBER_DEFINE_RECORDED_UNARY_OP(abs)
EMBER_DEFINE_RECORDED_UNARY_OP(angle)
#undef EMBER_DEFINE_RECORDED_UNARY_OP

// Piecewise-constant ops that keep the input's dtype: recorded with zero gradients, as PyTorch.
#define EMBER_DEFINE_STEP_UNARY_OP(name, node)                                  \
  Tensor name(const Tensor& a, const Tensor& out) {                             \
    if (autograd::should_record(a)) {                                           \
      return derivatives::zero_gradient(                                        \
          node, #name, a, out,                                                  \
          [](const Tensor& t, const Tensor& o) { return native::name(t, o); }); \
    }                                                                           \
    return native::name(a, out);                                                \
  }
EMBER_DEFINE_STEP_UNARY_OP(floor, "FloorBackward0")
EMBER_DEFINE_STEP_UNARY_OP(ceil, "CeilBackward0")
EMBER_DEFINE_STEP_UNARY_OP(round, "RoundBackward0")
EMBER_DEFINE_STEP_UNARY_OP(trunc, "TruncBackward0")
EMBER_DEFINE_STEP_UNARY_OP(sign, "SignBackward0")
#undef EMBER_DEFINE_STEP_UNARY_OP

Tensor conj_physical(const Tensor& a, const Tensor& out) {
  // The conjugate of a real tensor is the tensor itself; real inputs record nothing.
  if (!a.is_complex() && !out.defined()) return a;
  if (a.is_complex() && autograd::should_record(a)) return derivatives::conj_physical(a, out);
  return native::conj_physical(a, out);
}

Tensor square(const Tensor& a, const Tensor& out) {
  // PyTorch defines square as pow(a, 2) (its node is PowBackward0), so bool squares to int64
  // like bool * int does.
  return pow(a, Scalar(int64_t(2)), out);
}

Tensor round(const Tensor& a, int64_t decimals, const Tensor& out) {
  if (decimals == 0) return round(a, out);  // RoundBackward0
  if (autograd::should_record(a)) return derivatives::round(a, decimals, out);
  return native::round(a, decimals, out);
}

Tensor polygamma(int64_t n, const Tensor& a, const Tensor& out) {
  if (autograd::should_record(a)) return derivatives::polygamma(n, a, out);
  return native::polygamma(n, a, out);
}

Tensor logit(const Tensor& a, std::optional<double> eps, const Tensor& out) {
  if (autograd::should_record(a)) return derivatives::logit(a, eps, out);
  return native::logit(a, eps, out);
}

Tensor nan_to_num(const Tensor& a, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf, const Tensor& out) {
  if (autograd::should_record(a)) return derivatives::nan_to_num(a, nan, posinf, neginf, out);
  return native::nan_to_num(a, nan, posinf, neginf, out);
}

// clamp, clamp_min and clamp_max compute alike (derivatives::clamp runs native clamp) but are
// separate ops in PyTorch, with their own nodes.
Tensor clamp(const Tensor& a, const std::optional<Scalar>& min, const std::optional<Scalar>& max,
             const Tensor& out) {
  if (autograd::should_record(a)) return derivatives::clamp("ClampBackward1", a, min, max, out);
  return native::clamp(a, min, max, out);
}

Tensor clamp(const Tensor& a, const Tensor& min, const Tensor& max, const Tensor& out) {
  if (autograd::should_record(a, min, max)) {
    return derivatives::clamp("ClampBackward0", a, min, max, out);
  }
  return native::clamp(a, min, max, out);
}

Tensor clamp_min(const Tensor& a, const Scalar& min, const Tensor& out) {
  if (autograd::should_record(a)) {
    return derivatives::clamp("ClampMinBackward0", a, min, std::nullopt, out);
  }
  return native::clamp_min(a, min, out);
}

Tensor clamp_max(const Tensor& a, const Scalar& max, const Tensor& out) {
  if (autograd::should_record(a)) {
    return derivatives::clamp("ClampMaxBackward0", a, std::nullopt, max, out);
  }
  return native::clamp_max(a, max, out);
}

Tensor clamp_min(const Tensor& a, const Tensor& min, const Tensor& out) {
  if (autograd::should_record(a, min)) {
    return derivatives::clamp("ClampMinBackward1", a, min, Tensor(), out);
  }
  return native::clamp_min(a, min, out);
}

Tensor clamp_max(const Tensor& a, const Tensor& max, const Tensor& out) {
  if (autograd::should_record(a, max)) {
    return derivatives::clamp("ClampMaxBackward1", a, Tensor(), max, out);
  }
  return native::clamp_max(a, max, out);
}

}  // namespace ember
