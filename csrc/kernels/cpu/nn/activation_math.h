// Scalar formulas of the pointwise activations, shared by the forward and backward kernels
// (nn_activation_kernels.cpp, nn_activation_backward_kernels.cpp). V is the compute type: float
// for float16/bfloat16/float32, double for float64, the integer type itself for the ops that
// accept integers (relu, threshold, hardtanh).
#pragma once
#include <cmath>
#include <type_traits>
#include "kernels/cpu/cpu_level.h"

#include "kernels/cpu/vec/vec_math.h"
#include "kernels/cpu/vec_math.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace act_math {

constexpr double kSqrt1_2 = 0.70710678118654752440;      // 1 / sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;   // 1 / sqrt(2 pi)
constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2 / pi)
constexpr double kGeluTanhCoef = 0.044715;

// V is a scalar (float, double, an integer) or an explicit vector (vec::Vec<float / double>):
// the formulas below are written once for both, through these helpers.
template <typename V>
struct IsVec : std::false_type {};
template <typename T>
struct IsVec<vec::Vec<T>> : std::true_type {};
template <typename V>
constexpr bool is_vec_v = IsVec<V>::value;

// c ? a : b, lane by lane for vectors.
template <typename C, typename V>
inline V where(C c, V a, V b) {
  if constexpr (is_vec_v<V>) {
    return vec::select(c, a, b);
  } else {
    return c ? a : b;
  }
}

template <typename V>
inline V vabs(V x) {
  if constexpr (is_vec_v<V>) {
    return vec::abs(x);
  } else {
    return std::fabs(x);
  }
}

template <typename V>
inline V vexp(V x) {
  if constexpr (is_vec_v<V>) {
    return vec::exp(x);
  } else if constexpr (std::is_same_v<V, float> || std::is_same_v<V, double>) {
    return vmath::exp(x);
  } else {
    return std::exp(x);
  }
}

template <typename V>
inline V vexpm1(V x) {
  if constexpr (is_vec_v<V>) {
    return vec::expm1(x);
  } else {
    return vmath::expm1(x);
  }
}

template <typename V>
inline V vlog1p(V x) {
  if constexpr (is_vec_v<V>) {
    return vec::log1p(x);
  } else {
    return vmath::log1p(x);
  }
}

template <typename V>
inline V vtanh(V x) {
  if constexpr (is_vec_v<V>) {
    return vec::tanh(x);
  } else {
    return vmath::tanh(x);
  }
}

template <typename V>
inline V vsigmoid(V x) {
  if constexpr (is_vec_v<V>) {
    return vec::sigmoid(x);
  } else {
    return vmath::sigmoid(x);
  }
}

// erf in double precision, branch-free so that it vectorises (std::erf is an opaque libm call,
// which made gelu 15x slower than PyTorch's). Cody's rational approximations as in Cephes: for
// |x| <= 1, x T(x^2) / U(x^2); beyond, 1 - e^{-x^2} P(|x|) / Q(|x|), with |x| clamped at 8 where
// erf is 1 to double precision. Within 2 ulp of the correctly rounded result (checked against
// math.erf over [-7, 7]); float callers compute in double and round once.
inline double erf(double x) {
  const double ax = std::fabs(x), z = x * x;
  double t = 9.60497373987051638749E0;
  t = std::fma(t, z, 9.00260197203842689217E1);
  t = std::fma(t, z, 2.23200534594684319226E3);
  t = std::fma(t, z, 7.00332514112805075473E3);
  t = std::fma(t, z, 5.55923013010394962768E4);
  double u = z + 3.35617141647503099647E1;
  u = std::fma(u, z, 5.21357949780152679795E2);
  u = std::fma(u, z, 4.59432382970980127987E3);
  u = std::fma(u, z, 2.26290000613890934246E4);
  u = std::fma(u, z, 4.92673942608635921086E4);
  const double small = x * t / u;
  const double a = ax < 8.0 ? ax : 8.0;
  double p = 2.46196981473530512524E-10;
  p = std::fma(p, a, 5.64189564831068821977E-1);
  p = std::fma(p, a, 7.46321056442269912687E0);
  p = std::fma(p, a, 4.86371970985681366614E1);
  p = std::fma(p, a, 1.96520832956077098242E2);
  p = std::fma(p, a, 5.26445194995477358631E2);
  p = std::fma(p, a, 9.34528527171957607540E2);
  p = std::fma(p, a, 1.02755188689515710272E3);
  p = std::fma(p, a, 5.57535335369399327526E2);
  double q = a + 1.32281951154744992508E1;
  q = std::fma(q, a, 8.67072140885989742329E1);
  q = std::fma(q, a, 3.54937778887819891062E2);
  q = std::fma(q, a, 9.75708501743205489753E2);
  q = std::fma(q, a, 1.82390916687909736289E3);
  q = std::fma(q, a, 2.24633760818710981792E3);
  q = std::fma(q, a, 1.65666309194161350182E3);
  q = std::fma(q, a, 5.57535340817727675546E2);
  const double large = 1.0 - vmath::exp(-z) * p / q;   // exp(-inf) = 0: erf(+-inf) = +-1
  return ax <= 1.0 ? small : std::copysign(large, x);  // NaN falls to `large`, which is NaN
}
template <typename V>
inline V verf(V x) {
  if constexpr (is_vec_v<V>) {
    return vec::erf(x);
  } else {
    return V(erf(double(x)));
  }
}

// log(1 + e^x) without overflow: max(x, 0) + log1p(e^-|x|).
template <typename V>
inline V softplus1(V x) {
  const V m = where(x > V(0), x, V(0));
  return m + vlog1p(vexp(-vabs(x)));
}

// gelu(x) = x Phi(x). The vector paths take Phi from erfc (vec::gelu_erf; x erfc(-x / sqrt 2) / 2
// in double), which keeps the relative accuracy of the tiny negative results that 1 + erf(x /
// sqrt 2) rounds to 0 (x < -8 in double).
template <typename V>
inline V gelu(V x) {
  if constexpr (std::is_same_v<V, vec::Vec<float>>) {
    return vec::gelu_erf(x);
  } else if constexpr (std::is_same_v<V, vec::Vec<double>>) {
    return x * V(0.5) * vec::erfc(x * V(-kSqrt1_2));
  } else {
    return x * V(0.5) * (V(1) + verf(x * V(kSqrt1_2)));
  }
}
template <typename V>
inline V gelu_grad(V x) {
  const V cdf = V(0.5) * (V(1) + verf(x * V(kSqrt1_2)));
  const V pdf = vexp(V(-0.5) * x * x) * V(kInvSqrt2Pi);
  return cdf + x * pdf;
}

// The tanh form, 0.5 x (1 + tanh(u)), as x sigmoid(2 u) (the same function): 1 + tanh(u)
// cancels to 0 for u below -9 where the product is still a normal number, and sigmoid is cheaper
// than tanh. With s = sigmoid(2 u): 0.5 (1 + tanh u) = s and 1 - tanh(u)^2 = 4 s (1 - s).
template <typename V>
inline V gelu_tanh(V x) {
  const V inner = V(kSqrt2OverPi) * (x + V(kGeluTanhCoef) * x * x * x);
  return x * vsigmoid(inner + inner);
}
template <typename V>
inline V gelu_tanh_grad(V x) {
  const V x2 = x * x;
  const V inner = V(kSqrt2OverPi) * (x + V(kGeluTanhCoef) * x2 * x);
  const V s = vsigmoid(inner + inner);
  const V inner_derivative = V(kSqrt2OverPi) * (V(1) + V(3 * kGeluTanhCoef) * x2);
  return s + V(2) * x * s * (V(1) - s) * inner_derivative;
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
  const V m = where(x < V(0), x, V(0));
  return m - vlog1p(vexp(-vabs(x)));
}
// d/dx log sigmoid(x) = sigmoid(-x).
template <typename V>
inline V log_sigmoid_grad(V x) {
  return vsigmoid(-x);
}

}  // namespace act_math
}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
