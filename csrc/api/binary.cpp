// Public binary elementwise ops: the autograd node when recording, else the native op.
#include "api/binary.h"

#include "api/creation.h"
#include "api/views.h"
#include "autograd/derivatives/elementwise.h"
#include "autograd/record.h"
#include "autograd/variable.h"

namespace ember {

Tensor div(const Tensor& a, const Tensor& b, RoundingMode mode, const Tensor& out) {
  if (mode == RoundingMode::None) return div(a, b, out);  // true division: DivBackward0
  if (autograd::should_record(a, b)) {
    return derivatives::div_rounding(a, b, mode == RoundingMode::Trunc, out);
  }
  return native::div(a, b, mode, out);
}

Tensor remainder(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (autograd::should_record(a, b)) return derivatives::remainder(a, b, out);
  return native::remainder(a, b, out);
}

Tensor fmod(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (autograd::should_record(a, b)) return derivatives::fmod(a, b, out);
  return native::fmod(a, b, out);
}

Tensor pow(const Tensor& a, const Tensor& b, const Tensor& out) {
  // A Python-number exponent takes the scalar path (its node is PowBackward0).
  if (auto e = native::wrapped_value(b)) return pow(a, *e, out);
  if (autograd::should_record(a, b)) return derivatives::pow(a, b, out);
  return native::pow(a, b, out);
}

Tensor pow(const Tensor& a, const Scalar& exponent, const Tensor& out) {
  if (autograd::should_record(a)) return derivatives::pow(a, exponent, out);
  return native::pow(a, exponent, out);
}

Tensor pow(const Scalar& base, const Tensor& b, const Tensor& out) {
  // Recorded as tensor ** tensor with a wrapped-number base (PowBackward2).
  if (autograd::should_record(b)) return derivatives::pow(wrap_scalar(base), b, out);
  return native::pow(base, b, out);
}

Tensor float_power(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (!autograd::should_record(a, b)) return native::float_power(a, b, out);
  const ScalarType t = native::float_power_dtype(a, b, out);
  // PyTorch's float_power is pow of the double (complex double) operands: its graph is
  // ToCopyBackward0 -> PowBackward0 / 1 / 2.
  const bool inplace = out.defined() && autograd::is_inplace(out, {a, b});
  if (out.defined() && !inplace) autograd::check_out_arg(out, {a, b}, "float_power");
  auto widen = [t](const Scalar& v) {
    return is_complex(t) ? Scalar(v.to_complex()) : Scalar(v.to_double());
  };
  if (auto e = native::wrapped_value(b)) return pow(to_dtype(a, t), widen(*e), out);
  if (auto v = native::wrapped_value(a)) return pow(widen(*v), to_dtype(b, t), out);
  return pow(to_dtype(a, t), to_dtype(b, t), out);
}

Tensor atan2(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (autograd::should_record(a, b)) return derivatives::atan2(a, b, out);
  return native::atan2(a, b, out);
}

Tensor minimum(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (autograd::should_record(a, b)) return derivatives::minimum(a, b, out);
  return native::minimum(a, b, out);
}

Tensor maximum(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (autograd::should_record(a, b)) return derivatives::maximum(a, b, out);
  return native::maximum(a, b, out);
}

Tensor fmin(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (autograd::should_record(a, b)) return derivatives::fmin(a, b, out);
  return native::fmin(a, b, out);
}

Tensor fmax(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (autograd::should_record(a, b)) return derivatives::fmax(a, b, out);
  return native::fmax(a, b, out);
}

Tensor hypot(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (autograd::should_record(a, b)) return derivatives::hypot(a, b, out);
  return native::hypot(a, b, out);
}

Tensor logaddexp(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (autograd::should_record(a, b)) return derivatives::logaddexp(a, b, out);
  return native::logaddexp(a, b, out);
}

Tensor logaddexp2(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (autograd::should_record(a, b)) return derivatives::logaddexp2(a, b, out);
  return native::logaddexp2(a, b, out);
}

Tensor xlogy(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (autograd::should_record(a, b)) return derivatives::xlogy(a, b, out);
  return native::xlogy(a, b, out);
}

Tensor copysign(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (autograd::should_record(a, b)) return derivatives::copysign(a, b, out);
  return native::copysign(a, b, out);
}

Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight, const Tensor& out) {
  if (autograd::should_record(start, end, weight)) {
    return derivatives::lerp(start, end, weight, out);
  }
  return native::lerp(start, end, weight, out);
}

Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight, const Tensor& out) {
  if (autograd::should_record(start, end)) return derivatives::lerp(start, end, weight, out);
  return native::lerp(start, end, weight, out);
}

}  // namespace ember
