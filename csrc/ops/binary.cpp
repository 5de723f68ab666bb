// Binary elementwise ops: validation and dtype rules; kernels in kernels/cpu/binary_*.cpp.
#include "ops/binary.h"

#include "dispatch/copy.h"
#include "kernels/elementwise_stubs.h"
#include "ops/creation.h"
#include "ops/elementwise_common.h"
#include "ops/views.h"

namespace ember {
namespace native {

namespace {

Tensor run_binary(const char* op, ResultKind kind, const DispatchStub<IterFn>& stub,
                  const Tensor& a, const Tensor& b, const Tensor& out) {
  auto iter = build_elementwise(op, kind, out, {a, b});
  stub(iter.device(), iter);
  return finish_elementwise(iter, out);
}

void check_not_complex(const char* op, const Tensor& a, const Tensor& b) {
  EMBER_CHECK_T(TypeError, !a.is_complex() && !b.is_complex(), "[", op, "] ", op,
                " not implemented for complex tensors.");
}

}  // namespace

RoundingMode parse_rounding_mode(std::optional<std::string_view> mode) {
  if (!mode) return RoundingMode::None;
  if (*mode == "trunc") return RoundingMode::Trunc;
  if (*mode == "floor") return RoundingMode::Floor;
  EMBER_THROW(Error,
              "[div] div expected rounding_mode to be one of None, 'trunc', or 'floor' "
              "but found '",
              *mode, "'");
}

Tensor div(const Tensor& a, const Tensor& b, RoundingMode mode, const Tensor& out) {
  switch (mode) {
    case RoundingMode::Trunc:
      return run_binary("div", ResultKind::Promote, div_trunc_stub, a, b, out);
    case RoundingMode::Floor:
      return run_binary("div", ResultKind::Promote, div_floor_stub, a, b, out);
    default:
      return div(a, b, out);
  }
}

Tensor floor_divide(const Tensor& a, const Tensor& b, const Tensor& out) {
  return run_binary("floor_divide", ResultKind::Promote, div_floor_stub, a, b, out);
}

Tensor remainder(const Tensor& a, const Tensor& b, const Tensor& out) {
  return run_binary("remainder", ResultKind::Promote, remainder_stub, a, b, out);
}

Tensor fmod(const Tensor& a, const Tensor& b, const Tensor& out) {
  return run_binary("fmod", ResultKind::Promote, fmod_stub, a, b, out);
}

// Wrapped numbers are stored at full width by wrap_scalar.
std::optional<Scalar> wrapped_value(const Tensor& t) {
  if (!t.impl()->is_wrapped_number()) return std::nullopt;
  switch (t.dtype()) {
    case ScalarType::Bool:
      return Scalar(*t.data<bool>());
    case ScalarType::Int64:
      return Scalar(*t.data<int64_t>());
    case ScalarType::Float64:
      return Scalar(*t.data<double>());
    case ScalarType::Complex128:
      return Scalar(*t.data<complex128>());
    default:
      return std::nullopt;
  }
}

Tensor pow(const Tensor& a, const Tensor& b, const Tensor& out) {
  // A Python-number exponent takes the scalar path (fast paths for 2, 0.5, ... and the
  // negative-integer-power check).
  if (auto e = wrapped_value(b)) return pow(a, *e, out);
  return run_binary("pow", ResultKind::Promote, pow_stub, a, b, out);
}

Tensor pow(const Tensor& a, const Scalar& exponent, const Tensor& out) {
  EMBER_CHECK(!(is_integral(a.dtype(), /*include_bool=*/true) && exponent.is_integral() &&
                exponent.to_int64() < 0),
              "[pow] Integers to negative integer powers are not allowed.");
  Tensor e = wrap_scalar(exponent);
  auto iter = build_elementwise("pow", ResultKind::Promote, out, {a, e});
  // x ** 1 is a copy and x ** 0 is all ones, in every dtype including bool (as PyTorch).
  const bool real_exponent = !exponent.is_complex();
  if (real_exponent && exponent.to_double() == 1.0) {
    copy_into(iter.output(0), iter.input(0), "pow");
  } else if (real_exponent && exponent.to_double() == 0.0) {
    Tensor o = iter.output(0);
    fill_(o, Scalar(int64_t(1)));
  } else {
    pow_scalar_stub(iter.device(), iter, exponent);
  }
  return finish_elementwise(iter, out);
}

Tensor pow(const Scalar& base, const Tensor& b, const Tensor& out) {
  return run_binary("pow", ResultKind::Promote, pow_stub, wrap_scalar(base), b, out);
}

ScalarType float_power_dtype(const Tensor& a, const Tensor& b, const Tensor& out) {
  const ScalarType t =
      a.is_complex() || b.is_complex() ? ScalarType::Complex128 : ScalarType::Float64;
  if (out.defined() && (out.is_same(a) || out.is_same(b))) {
    EMBER_CHECK(out.dtype() == t, "[float_power] the base given to float_power_ has dtype ",
                dtype_name(out.dtype()), " but the operation's result requires dtype ",
                dtype_name(t));
  }
  return t;
}

Tensor float_power(const Tensor& a, const Tensor& b, const Tensor& out) {
  const ScalarType t = float_power_dtype(a, b, out);
  auto iter = build_elementwise_typed("float_power", t, out, {to_dtype(a, t), to_dtype(b, t)});
  float_power_stub(iter.device(), iter);
  return finish_elementwise(iter, out);
}

Tensor atan2(const Tensor& a, const Tensor& b, const Tensor& out) {
  return run_binary("atan2", ResultKind::PromoteToFloat, atan2_stub, a, b, out);
}

Tensor minimum(const Tensor& a, const Tensor& b, const Tensor& out) {
  check_not_complex("minimum", a, b);
  return run_binary("minimum", ResultKind::Promote, minimum_stub, a, b, out);
}

Tensor maximum(const Tensor& a, const Tensor& b, const Tensor& out) {
  check_not_complex("maximum", a, b);
  return run_binary("maximum", ResultKind::Promote, maximum_stub, a, b, out);
}

Tensor fmin(const Tensor& a, const Tensor& b, const Tensor& out) {
  check_not_complex("fmin", a, b);
  return run_binary("fmin", ResultKind::Promote, fmin_stub, a, b, out);
}

Tensor fmax(const Tensor& a, const Tensor& b, const Tensor& out) {
  check_not_complex("fmax", a, b);
  return run_binary("fmax", ResultKind::Promote, fmax_stub, a, b, out);
}

Tensor hypot(const Tensor& a, const Tensor& b, const Tensor& out) {
  return run_binary("hypot", ResultKind::Promote, hypot_stub, a, b, out);
}

Tensor logaddexp(const Tensor& a, const Tensor& b, const Tensor& out) {
  return run_binary("logaddexp", ResultKind::Promote, logaddexp_stub, a, b, out);
}

Tensor logaddexp2(const Tensor& a, const Tensor& b, const Tensor& out) {
  return run_binary("logaddexp2", ResultKind::Promote, logaddexp2_stub, a, b, out);
}

Tensor xlogy(const Tensor& a, const Tensor& b, const Tensor& out) {
  return run_binary("xlogy", ResultKind::PromoteToFloat, xlogy_stub, a, b, out);
}

Tensor copysign(const Tensor& a, const Tensor& b, const Tensor& out) {
  return run_binary("copysign", ResultKind::PromoteToFloat, copysign_stub, a, b, out);
}

namespace {
void check_lerp_dtype(const Tensor& start, const Tensor& other, const char* what) {
  EMBER_CHECK(start.dtype() == other.dtype(), "[lerp] expected dtype ", dtype_name(start.dtype()),
              " for `", what, "` but got dtype ", dtype_name(other.dtype()));
}
}  // namespace

Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight, const Tensor& out) {
  check_lerp_dtype(start, end, "end");
  check_lerp_dtype(start, weight, "weight");
  auto iter = build_elementwise_typed("lerp", start.dtype(), out, {start, end, weight});
  lerp_stub(iter.device(), iter);
  return finish_elementwise(iter, out);
}

Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight, const Tensor& out) {
  check_lerp_dtype(start, end, "end");
  auto iter = build_elementwise_typed("lerp", start.dtype(), out, {start, end});
  lerp_scalar_stub(iter.device(), iter, weight);
  return finish_elementwise(iter, out);
}

}  // namespace native
}  // namespace ember
