// Scalar formulas of the pointwise activations, shared by the forward and backward kernels
// (nn_activation_kernels.cpp, nn_activation_backward_kernels.cpp). V is the compute type: float
// for float16/bfloat16/float32, double for float64, the integer type itself for the ops that
// accept integers (relu, threshold, hardtanh).
#pragma once
#include <cmath>
#include <type_traits>

#include "kernels/cpu/vec_math.h"

namespace ember {
namespace act_math {

constexpr double kSqrt1_2 = 0.70710678118654752440;      // 1 / sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;   // 1 / sqrt(2 pi)
constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2 / pi)
constexpr double kGeluTanhCoef = 0.044715;

template <typename V>
inline V vexp(V x) {
  if constexpr (std::is_same_v<V, float> || std::is_same_v<V, double>) {
    return vmath::exp(x);
  } else {
    return std::exp(x);
  }
}
template <typename V>
inline V vexpm1(V x) {
  return vmath::expm1(x);
}
template <typename V>
inline V vlog1p(V x) {
  return vmath::log1p(x);
}
template <typename V>
inline V vtanh(V x) {
  return vmath::tanh(x);
}
template <typename V>
inline V vsigmoid(V x) {
  return vmath::sigmoid(x);
}

// log(1 + e^x) without overflow: max(x, 0) + log1p(e^-|x|).
template <typename V>
inline V softplus1(V x) {
  const V m = x > V(0) ? x : V(0);
  return m + vlog1p(vexp(-std::fabs(x)));
}

template <typename V>
inline V gelu(V x) {
  return x * V(0.5) * (V(1) + std::erf(x * V(kSqrt1_2)));
}
template <typename V>
inline V gelu_grad(V x) {
  const V cdf = V(0.5) * (V(1) + std::erf(x * V(kSqrt1_2)));
  const V pdf = vexp(V(-0.5) * x * x) * V(kInvSqrt2Pi);
  return cdf + x * pdf;
}

template <typename V>
inline V gelu_tanh(V x) {
  const V inner = V(kSqrt2OverPi) * (x + V(kGeluTanhCoef) * x * x * x);
  return V(0.5) * x * (V(1) + vtanh(inner));
}
template <typename V>
inline V gelu_tanh_grad(V x) {
  const V x2 = x * x;
  const V inner = V(kSqrt2OverPi) * (x + V(kGeluTanhCoef) * x2 * x);
  const V t = vtanh(inner);
  const V left_derivative = V(0.5) * (V(1) + t);
  const V inner_derivative = V(kSqrt2OverPi) * (V(1) + V(3 * kGeluTanhCoef) * x2);
  return left_derivative + V(0.5) * x * (V(1) - t * t) * inner_derivative;
}

template <typename V>
inline V silu(V x) {
  return x * vsigmoid(x);
}
template <typename V>
inline V silu_grad(V x) {
  const V s = vsigmoid(x);
  return s * (V(1) + x * (V(1) - s));
}

template <typename V>
inline V mish(V x) {
  return x * vtanh(softplus1(x));
}
template <typename V>
inline V mish_grad(V x) {
  const V t = vtanh(softplus1(x));
  return t + x * vsigmoid(x) * (V(1) - t * t);
}

// log sigmoid(x) = min(x, 0) - log1p(e^-|x|).
template <typename V>
inline V log_sigmoid(V x) {
  const V m = x < V(0) ? x : V(0);
  return m - vlog1p(vexp(-std::fabs(x)));
}
// d/dx log sigmoid(x) = sigmoid(-x).
template <typename V>
inline V log_sigmoid_grad(V x) {
  return vsigmoid(-x);
}

}  // namespace act_math
}  // namespace ember
