// Binary (and ternary) elementwise ops with PyTorch semantics: broadcasting, torch.result_type
// promotion (Python numbers arrive as wrapped 0-d tensors), and an optional `out` (undefined:
// new tensor; one of the inputs: in-place; otherwise out=, resized as needed).
#pragma once
#include <optional>
#include <string_view>

#include "core/scalar.h"
#include "core/tensor.h"
#include "ops/elementwise.h"

namespace ember {
namespace native {

enum class RoundingMode { None, Trunc, Floor };
// Parses "trunc" / "floor" (nullopt: true division); anything else is a RuntimeError.
RoundingMode parse_rounding_mode(std::optional<std::string_view> mode);

// div with rounding: integer division by zero raises RuntimeError("ZeroDivisionError").
Tensor div(const Tensor& a, const Tensor& b, RoundingMode mode, const Tensor& out = {});
Tensor floor_divide(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor remainder(const Tensor& a, const Tensor& b, const Tensor& out = {});  // sign of b
Tensor fmod(const Tensor& a, const Tensor& b, const Tensor& out = {});       // sign of a

Tensor pow(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor pow(const Tensor& a, const Scalar& exponent, const Tensor& out = {});
Tensor pow(const Scalar& base, const Tensor& b, const Tensor& out = {});
Tensor float_power(const Tensor& a, const Tensor& b, const Tensor& out = {});
// float_power's dtype (complex128 if either operand is complex, else float64); an in-place base
// must already have it (RuntimeError otherwise).
ScalarType float_power_dtype(const Tensor& a, const Tensor& b, const Tensor& out);
// The Python number a wrapped 0-d tensor holds (nullopt for any other tensor): pow and
// float_power take their scalar-exponent path for it.
std::optional<Scalar> wrapped_value(const Tensor& t);

Tensor atan2(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor minimum(const Tensor& a, const Tensor& b, const Tensor& out = {});  // NaN propagates
Tensor maximum(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor fmin(const Tensor& a, const Tensor& b, const Tensor& out = {});  // NaN ignored
Tensor fmax(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor hypot(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor logaddexp(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor logaddexp2(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor xlogy(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor copysign(const Tensor& a, const Tensor& b, const Tensor& out = {});
// start + weight * (end - start); start, end (and a tensor weight) must share a dtype.
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight, const Tensor& out = {});
Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight, const Tensor& out = {});

}  // namespace native
}  // namespace ember
