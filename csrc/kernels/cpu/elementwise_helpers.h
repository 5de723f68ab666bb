// Shared building blocks of the elementwise CPU kernels: dtype dispatch + cpu_kernel for the
// common shapes of op (unary, binary, predicate), with 16-bit floats computed in float.
//
//   unary_kernel<kFloatingAndComplex>(iter, "exp", [](auto x) { return vmath_or_std(x); });
//
// `f` is a generic lambda called with the compute type (acc_type<T>: float for Half and
// BFloat16, T otherwise); its result converts back to T. Half and BFloat16 run block-wise in
// float (reduced_float_loops.h) so that their loops vectorise too.
#pragma once
#include <complex>
#include <type_traits>
#include "kernels/cpu/cpu_level.h"

#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/reduced_float_loops.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {

// The real type underlying T: float for complex<float>, T itself otherwise.
template <typename T>
struct RealType {
  using type = T;
};
template <typename T>
struct RealType<std::complex<T>> {
  using type = T;
};
template <typename T>
using real_type_t = typename RealType<T>::type;

// out (dtype T) = f(x) for the iterator's common dtype T in Set.
template <uint32_t Set, typename F>
void unary_kernel(TensorIterator& iter, const char* name, const F& f) {
  dispatch_dtype<Set>(iter.common_dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_type<T>;
    if constexpr (is_reduced_float_v<T>) {
      reduced_float_kernel<T, T, 1>(iter, [f](float x) { return f(x); });
    } else {
      cpu_kernel(iter, [f](T x) -> T { return T(f(A(x))); });
    }
  });
}

// out (bool) = f(x).
template <uint32_t Set, typename F>
void predicate_kernel(TensorIterator& iter, const char* name, const F& f) {
  dispatch_dtype<Set>(iter.common_dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_type<T>;
    if constexpr (is_reduced_float_v<T>) {
      reduced_float_kernel<T, bool, 1>(iter, [f](float x) -> bool { return f(x); });
    } else {
      cpu_kernel(iter, [f](T x) -> bool { return f(A(x)); });
    }
  });
}

// out (dtype T) = f(a, b).
template <uint32_t Set, typename F>
void binary_kernel(TensorIterator& iter, const char* name, const F& f) {
  dispatch_dtype<Set>(iter.common_dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_type<T>;
    if constexpr (is_reduced_float_v<T>) {
      reduced_float_kernel<T, T, 2>(iter, [f](float a, float b) { return f(a, b); });
    } else {
      cpu_kernel(iter, [f](T a, T b) -> T { return T(f(A(a), A(b))); });
    }
  });
}

// out (bool) = f(a, b).
template <uint32_t Set, typename F>
void compare_kernel(TensorIterator& iter, const char* name, const F& f) {
  dispatch_dtype<Set>(iter.common_dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_type<T>;
    if constexpr (is_reduced_float_v<T>) {
      reduced_float_kernel<T, bool, 2>(iter, [f](float a, float b) -> bool { return f(a, b); });
    } else {
      cpu_kernel(iter, [f](T a, T b) -> bool { return f(A(a), A(b)); });
    }
  });
}

// Integer arithmetic that wraps like PyTorch (two's complement) without signed-overflow UB:
// computed in the unsigned type of the same width.
template <typename T>
inline T wrapping_add(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <typename T>
inline T wrapping_sub(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  } else {
    return a - b;
  }
}
// Complex product by the textbook formula (as PyTorch and NumPy), without the C99 Annex G NaN
// recovery of std::complex's operator* (a libgcc call per element).
template <typename C>
inline C complex_mul(C a, C b) {
  return C(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
}

// Complex quotient by Smith's algorithm, as NumPy and PyTorch (scaled to avoid overflow).
template <typename C>
inline C complex_div(C x, C y) {
  using R = typename C::value_type;
  const R a = x.real(), b = x.imag(), c = y.real(), d = y.imag();
  const R abs_c = std::abs(c), abs_d = std::abs(d);
  if (abs_c >= abs_d) {
    if (abs_c == R(0) && abs_d == R(0)) return C(a / abs_c, b / abs_d);
    const R rat = d / c;
    const R scl = R(1) / (c + d * rat);
    return C((a + b * rat) * scl, (b - a * rat) * scl);
  }
  const R rat = c / d;
  const R scl = R(1) / (d + c * rat);
  return C((a * rat + b) * scl, (b * rat - a) * scl);
}

template <typename T>
inline T wrapping_mul(T a, T b) {
  if constexpr (is_complex_v<T>) {
    return complex_mul(a, b);
  } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // uint16 * uint16 promotes to (signed) int and can overflow: widen to unsigned int first.
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}
template <typename T>
inline T wrapping_neg(T a) {
  return wrapping_sub(T(0), a);
}

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
