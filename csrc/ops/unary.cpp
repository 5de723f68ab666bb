// Unary elementwise ops: validation and dtype rules; the kernels are in kernels/cpu/unary_*.cpp.
#include "ops/unary.h"

#include <cmath>
#include <limits>

#include "dispatch/copy.h"
#include "ops/binary.h"
#include "ops/creation.h"
#include "ops/elementwise_common.h"
#include "ops/quantized/quantize.h"
#include "ops/views.h"

namespace ember {
namespace native {

namespace {

Tensor run_unary(const char* op, ResultKind kind, const DispatchStub<IterFn>& stub, const Tensor& a,
                 const Tensor& out) {
  auto iter = build_elementwise(op, kind, out, {a});
  stub(iter.device(), iter);
  return finish_elementwise(iter, out);
}

}  // namespace

// The float unary ops of tables/unary.def.
// A row's dtype rule as the TensorIterator's result kind.
constexpr ResultKind kUnaryResult_FLOAT = ResultKind::PromoteToFloat;

// Quantized inputs: the ops PyTorch gives fixed output parameters (sigmoid, tanh) compute on the
// dequantized values; every other one refuses them (the dispatcher's error names dequantize()).
#define EMBER_UNARY_OP(name, rule, ...)                                            \
  Tensor name(const Tensor& a, const Tensor& out) {                                \
    double fixed_scale = 0;                                                        \
    int64_t fixed_zero_point = 0;                                                  \
    if (is_quantized(a.dtype()) &&                                                 \
        fixed_output_qparams(#name, a.dtype(), &fixed_scale, &fixed_zero_point)) { \
      return quantized_via_float(                                                  \
          a, #name, [](const Tensor& real) { return name(real, Tensor()); }, out); \
    }                                                                              \
    return run_unary(#name, kUnaryResult_##rule, name##_stub, a, out);             \
  }
#include "tables/unary.def"
#undef EMBER_UNARY_OP

// Piecewise-constant ops that keep the input's dtype (the api layer records zero gradients).
#define EMBER_DEFINE_STEP_UNARY_OP(name)                               \
  Tensor name(const Tensor& a, const Tensor& out) {                    \
    return run_unary(#name, ResultKind::Promote, name##_stub, a, out); \
  }
EMBER_DEFINE_STEP_UNARY_OP(floor)
EMBER_DEFINE_STEP_UNARY_OP(ceil)
EMBER_DEFINE_STEP_UNARY_OP(round)
EMBER_DEFINE_STEP_UNARY_OP(trunc)
#undef EMBER_DEFINE_STEP_UNARY_OP

Tensor sgn(const Tensor& a, const Tensor& out) {
  return run_unary("sgn", ResultKind::Promote, sgn_stub, a, out);
}

Tensor frac(const Tensor& a, const Tensor& out) {
  return run_unary("frac", ResultKind::Promote, frac_stub, a, out);
}

Tensor bitwise_not(const Tensor& a, const Tensor& out) {
  return run_unary("bitwise_not", ResultKind::Promote, bitwise_not_stub, a, out);
}

Tensor conj_physical(const Tensor& a, const Tensor& out) {
  // The conjugate of a real tensor is the tensor itself (PyTorch returns the input too).
  if (!a.is_complex() && !out.defined()) return a;
  return run_unary("conj_physical", ResultKind::Promote, conj_physical_stub, a, out);
}

#define EMBER_DEFINE_PREDICATE_OP(name)                             \
  Tensor name(const Tensor& a, const Tensor& out) {                 \
    return run_unary(#name, ResultKind::Bool, name##_stub, a, out); \
  }
EMBER_DEFINE_PREDICATE_OP(isnan)
EMBER_DEFINE_PREDICATE_OP(isinf)
EMBER_DEFINE_PREDICATE_OP(isfinite)
EMBER_DEFINE_PREDICATE_OP(logical_not)
EMBER_DEFINE_PREDICATE_OP(isreal)
#undef EMBER_DEFINE_PREDICATE_OP

Tensor isposinf(const Tensor& a, const Tensor& out) {
  EMBER_CHECK_T(TypeError, !a.is_complex(), "[isposinf] isposinf does not support complex inputs.");
  return run_unary("isposinf", ResultKind::Bool, isposinf_stub, a, out);
}

Tensor isneginf(const Tensor& a, const Tensor& out) {
  EMBER_CHECK_T(TypeError, !a.is_complex(), "[isneginf] isneginf does not support complex inputs.");
  return run_unary("isneginf", ResultKind::Bool, isneginf_stub, a, out);
}

Tensor signbit(const Tensor& a, const Tensor& out) {
  EMBER_CHECK_T(NotImplementedError, !a.is_complex(),
                "[signbit] signbit is not implemented for complex tensors.");
  return run_unary("signbit", ResultKind::Bool, signbit_stub, a, out);
}

Tensor neg(const Tensor& a, const Tensor& out) {
  EMBER_CHECK_T(NotImplementedError, a.dtype() != ScalarType::Bool,
                "[neg] Negation, the `-` operator, on a bool tensor is not supported. If you are "
                "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  return run_unary("neg", ResultKind::Promote, neg_stub, a, out);
}

Tensor sign(const Tensor& a, const Tensor& out) {
  EMBER_CHECK_T(NotImplementedError, !a.is_complex(),
                "[sign] Unlike NumPy, sign is not intended to support complex numbers. Please "
                "use sgn instead.");
  return run_unary("sign", ResultKind::Promote, sign_stub, a, out);
}

Tensor abs(const Tensor& a, const Tensor& out) {
  if (a.is_complex()) {
    EMBER_CHECK(!out.is_same(a), "[abs] In-place abs is not supported for complex tensors.");
    auto iter = build_elementwise_typed("abs", to_real(a.dtype()), out, {a});
    abs_stub(iter.device(), iter);
    return finish_elementwise(iter, out);
  }
  return run_unary("abs", ResultKind::Promote, abs_stub, a, out);
}

Tensor angle(const Tensor& a, const Tensor& out) {
  if (a.is_complex()) {
    EMBER_CHECK(!out.is_same(a), "[angle] In-place angle is not supported for complex tensors.");
    auto iter = build_elementwise_typed("angle", to_real(a.dtype()), out, {a});
    angle_stub(iter.device(), iter);
    return finish_elementwise(iter, out);
  }
  return run_unary("angle", ResultKind::PromoteToFloat, angle_stub, a, out);
}

Tensor positive(const Tensor& a) {
  EMBER_CHECK_T(NotImplementedError, a.dtype() != ScalarType::Bool,
                "[positive] The `+` operator, on a bool tensor is not supported.");
  return a;
}

Tensor round(const Tensor& a, int64_t decimals, const Tensor& out) {
  if (decimals == 0) return round(a, out);
  auto iter = build_elementwise("round", ResultKind::Promote, out, {a});
  round_decimals_stub(iter.device(), iter, decimals);
  return finish_elementwise(iter, out);
}

Tensor polygamma(int64_t n, const Tensor& a, const Tensor& out) {
  EMBER_CHECK(n >= 0, "[polygamma] polygamma(n, x) does not support negative n.");
  if (n == 0) return run_unary("polygamma", ResultKind::PromoteToFloat, digamma_stub, a, out);
  auto iter = build_elementwise("polygamma", ResultKind::PromoteToFloat, out, {a});
  polygamma_stub(iter.device(), iter, n);
  return finish_elementwise(iter, out);
}

Tensor logit(const Tensor& a, std::optional<double> eps, const Tensor& out) {
  auto iter = build_elementwise("logit", ResultKind::PromoteToFloat, out, {a});
  logit_stub(iter.device(), iter, eps ? *eps : -1.0);
  return finish_elementwise(iter, out);
}

namespace {
// Largest finite value of a floating dtype (the default replacement for +inf).
double max_finite(ScalarType t) {
  switch (to_real(t)) {
    case ScalarType::Float16:
      return 65504.0;
    case ScalarType::BFloat16:
      return 3.3895313892515355e38;
    case ScalarType::Float32:
      return std::numeric_limits<float>::max();
    default:
      return std::numeric_limits<double>::max();
  }
}
}  // namespace

Tensor nan_to_num(const Tensor& a, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf, const Tensor& out) {
  auto iter = build_elementwise("nan_to_num", ResultKind::Promote, out, {a});
  const ScalarType t = iter.common_dtype();
  if (!is_floating(t) && !is_complex(t)) {  // integers have no nan or inf: a copy
    copy_into(iter.output(0), iter.input(0), "nan_to_num");
    return finish_elementwise(iter, out);
  }
  const double big = max_finite(t);
  nan_to_num_stub(iter.device(), iter, nan.value_or(0.0), posinf.value_or(big),
                  neginf.value_or(-big));
  return finish_elementwise(iter, out);
}

namespace {

// The range of an integer dtype, as doubles (exact enough to compare bounds against).
std::pair<double, double> integer_range(ScalarType t) {
  switch (t) {
    case ScalarType::UInt8:
      return {0.0, 255.0};
    case ScalarType::Int8:
      return {-128.0, 127.0};
    case ScalarType::Int16:
      return {-32768.0, 32767.0};
    case ScalarType::Int32:
      return {-2147483648.0, 2147483647.0};
    default:
      return {-9223372036854775808.0, 9223372036854775807.0};
  }
}

// clamp, clamp_min and clamp_max share the computation (PyTorch's are separate ops, with
// separate nodes in the api layer).
Tensor clamp_scalar_bounds(const Tensor& a, const std::optional<Scalar>& min,
                           const std::optional<Scalar>& max, const Tensor& out) {
  EMBER_CHECK(min || max, "[clamp] At least one of 'min' or 'max' must not be None");
  EMBER_CHECK_T(NotImplementedError, !a.is_complex(),
                "[clamp] clamp is not supported for complex types");
  // The bounds take part in type promotion as Python numbers: clamp(int_tensor, 0.5) is float.
  std::vector<Tensor> operands{a};
  if (min) operands.push_back(wrap_scalar(*min));
  if (max) operands.push_back(wrap_scalar(*max));
  const ScalarType common = result_type(operands);
  EMBER_CHECK_T(NotImplementedError, common != ScalarType::Bool,
                "[clamp] clamp is not implemented for dtype bool");
  EMBER_CHECK_T(NotImplementedError, !is_complex(common),
                "[clamp] clamp is not supported for complex types");
  if (is_integral(common, /*include_bool=*/false)) {
    // A bound beyond the integer type in the direction that matters would set every element to
    // a value the type cannot hold: PyTorch refuses it. The harmless direction saturates in the
    // kernel (max=2**31-1 on int8 clamps nothing).
    const auto [lowest, highest] = integer_range(common);
    EMBER_CHECK(!min || min->to_double() <= highest, "[clamp] Clamp min value ", min->to_double(),
                " is outside the representable range of ", dtype_name(common));
    EMBER_CHECK(!max || max->to_double() >= lowest, "[clamp] Clamp max value ", max->to_double(),
                " is outside the representable range of ", dtype_name(common));
  }
  auto iter = build_elementwise_typed("clamp", common, out, {to_dtype(a, common)});
  clamp_scalar_stub(iter.device(), iter, min, max);
  return finish_elementwise(iter, out);
}

Tensor clamp_tensor_bounds(const Tensor& a, const Tensor& min, const Tensor& max,
                           const Tensor& out) {
  EMBER_CHECK(min.defined() || max.defined(),
              "[clamp] At least one of 'min' or 'max' must not be None");
  EMBER_CHECK_T(NotImplementedError,
                !a.is_complex() && !(min.defined() && min.is_complex()) &&
                    !(max.defined() && max.is_complex()),
                "[clamp] clamp is not supported for complex types");
  // One bound: clamp_min is maximum and clamp_max is minimum (both propagate NaN like clamp).
  if (!max.defined()) return maximum(a, min, out);
  if (!min.defined()) return minimum(a, max, out);
  const ScalarType common = result_type({a, min, max});
  EMBER_CHECK_T(NotImplementedError, common != ScalarType::Bool,
                "[clamp] clamp is not implemented for dtype bool");
  auto iter = build_elementwise_typed(
      "clamp", common, out, {to_dtype(a, common), to_dtype(min, common), to_dtype(max, common)});
  clamp_stub(iter.device(), iter);
  return finish_elementwise(iter, out);
}

}  // namespace

Tensor clamp(const Tensor& a, const std::optional<Scalar>& min, const std::optional<Scalar>& max,
             const Tensor& out) {
  return clamp_scalar_bounds(a, min, max, out);
}

Tensor clamp(const Tensor& a, const Tensor& min, const Tensor& max, const Tensor& out) {
  return clamp_tensor_bounds(a, min, max, out);
}

Tensor clamp_min(const Tensor& a, const Scalar& min, const Tensor& out) {
  return clamp_scalar_bounds(a, min, std::nullopt, out);
}

Tensor clamp_max(const Tensor& a, const Scalar& max, const Tensor& out) {
  return clamp_scalar_bounds(a, std::nullopt, max, out);
}

Tensor clamp_min(const Tensor& a, const Tensor& min, const Tensor& out) {
  return clamp_tensor_bounds(a, min, Tensor(), out);
}

Tensor clamp_max(const Tensor& a, const Tensor& max, const Tensor& out) {
  return clamp_tensor_bounds(a, Tensor(), max, out);
}

}  // namespace native
}  // namespace ember
