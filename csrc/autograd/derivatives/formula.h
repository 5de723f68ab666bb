// The vocabulary of derivative formulas: tensors get arithmetic operators and mix with Python
// numbers, so a formula reads like its maths (`grad * conj(result)`, `1.0 - squared(self)`).
// Everything here calls public ops, so a formula evaluated under create_graph=True is recorded
// in turn and every order of derivative comes for free. A file of formulas says
// `using namespace derivatives::formula;` (the operators are not visible anywhere else).
#pragma once
#include "api/compare.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/unary.h"
#include "core/scalar.h"
#include "core/tensor.h"

namespace ember {
namespace derivatives {
namespace formula {

constexpr double kPi = 3.14159265358979323846;
constexpr double kLn2 = 0.69314718055994530942;
constexpr double kLn10 = 2.30258509299404568402;
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;
constexpr double kSqrtPiOverTwo = 0.88622692545275801365;

// A Python number as an op operand: a wrapped 0-d tensor, which takes part in type promotion by
// category only, so `x * 2.0` keeps x's dtype (float32 stays float32).
inline Tensor num(double v) {
  return wrap_scalar(Scalar(v));
}

inline Tensor operator+(const Tensor& a, const Tensor& b) {
  return ember::add(a, b);
}
inline Tensor operator+(const Tensor& a, double b) {
  return ember::add(a, num(b));
}
inline Tensor operator+(double a, const Tensor& b) {
  return ember::add(num(a), b);
}
inline Tensor operator-(const Tensor& a, const Tensor& b) {
  return ember::sub(a, b);
}
inline Tensor operator-(const Tensor& a, double b) {
  return ember::sub(a, num(b));
}
inline Tensor operator-(double a, const Tensor& b) {
  return ember::sub(num(a), b);
}
inline Tensor operator-(const Tensor& a) {
  return ember::neg(a);
}
inline Tensor operator*(const Tensor& a, const Tensor& b) {
  return ember::mul(a, b);
}
inline Tensor operator*(const Tensor& a, double b) {
  return ember::mul(a, num(b));
}
inline Tensor operator*(double a, const Tensor& b) {
  return ember::mul(num(a), b);
}
inline Tensor operator/(const Tensor& a, const Tensor& b) {
  return ember::div(a, b);
}
inline Tensor operator/(const Tensor& a, double b) {
  return ember::div(a, num(b));
}
inline Tensor operator/(double a, const Tensor& b) {
  return ember::div(num(a), b);
}

// x * x: one mul node (ember::square is pow(x, 2), a different node and dtype rule).
inline Tensor squared(const Tensor& a) {
  return ember::mul(a, a);
}
// g where mask holds, 0 elsewhere; and the reverse.
inline Tensor keep_where(const Tensor& mask, const Tensor& g) {
  return ember::where(mask, g, num(0.0));
}
inline Tensor zero_where(const Tensor& mask, const Tensor& g) {
  return ember::where(mask, num(0.0), g);
}

}  // namespace formula
}  // namespace derivatives
}  // namespace ember
