// A Python-style number: bool, integer, floating or complex, converted to any dtype on demand.
#pragma once
#include <complex>
#include <cstdint>
#include <type_traits>

#include <cmath>
#include <limits>
#include "core/dtype.h"
#include "core/error.h"

namespace ember {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Float, Complex };

  Scalar() : Scalar(int64_t(0)) {}
  Scalar(bool v) : kind_(Kind::Bool) { i_ = v; }                   // NOLINT
  Scalar(int v) : kind_(Kind::Int) { i_ = v; }                     // NOLINT
  Scalar(int64_t v) : kind_(Kind::Int) { i_ = v; }                 // NOLINT
  Scalar(double v) : kind_(Kind::Float) { d_ = v; }                // NOLINT
  Scalar(float v) : kind_(Kind::Float) { d_ = v; }                 // NOLINT
  Scalar(std::complex<double> v) : kind_(Kind::Complex), c_(v) {}  // NOLINT

  Kind kind() const { return kind_; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_floating() const { return kind_ == Kind::Float; }
  bool is_complex() const { return kind_ == Kind::Complex; }

  // The dtype a Python number of this kind gets when it becomes a tensor on its own.
  ScalarType natural_dtype() const {
    switch (kind_) {
      case Kind::Bool:
        return ScalarType::Bool;
      case Kind::Int:
        return ScalarType::Int64;
      case Kind::Float:
        return default_dtype();
      default:
        return default_complex_dtype();
    }
  }

  double to_double() const {
    switch (kind_) {
      case Kind::Float:
        return d_;
      case Kind::Complex:
        return c_.real();
      default:
        return static_cast<double>(i_);
    }
  }
  int64_t to_int64() const {
    switch (kind_) {
      case Kind::Float:
        return static_cast<int64_t>(d_);
      case Kind::Complex:
        return static_cast<int64_t>(c_.real());
      default:
        return i_;
    }
  }
  std::complex<double> to_complex() const {
    return kind_ == Kind::Complex ? c_ : std::complex<double>(to_double(), 0.0);
  }
  bool to_bool() const {
    switch (kind_) {
      case Kind::Float:
        return d_ != 0.0;
      case Kind::Complex:
        return c_ != std::complex<double>(0, 0);
      default:
        return i_ != 0;
    }
  }

  // Conversion to a kernel's element type.
  template <typename T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) {
      return to_bool();
    } else if constexpr (is_complex_v<T>) {
      auto c = to_complex();
      return T(static_cast<typename T::value_type>(c.real()),
               static_cast<typename T::value_type>(c.imag()));
    } else if constexpr (is_floating_v<T>) {
      return static_cast<T>(static_cast<acc_type<T>>(to_double()));
    } else {
      // Integer targets: floating values truncate like a C cast, integers wrap like PyTorch.
      if (kind_ == Kind::Float || kind_ == Kind::Complex) {
        double d = to_double();
        // Out-of-range float -> int is undefined behaviour in C++; saturate through int64.
        if (!(d > -9.2233720368547758e18 && d < 9.2233720368547758e18)) return T(0);
        return static_cast<T>(static_cast<int64_t>(d));
      }
      return static_cast<T>(i_);
    }
  }

  // Like to<T>() but throws RuntimeError when the value does not fit T (fill_, full, clamp).
  template <typename T>
  T to_checked(const char* op) const;

 private:
  Kind kind_;
  union {
    int64_t i_;
    double d_;
  };
  std::complex<double> c_{};
};

}  // namespace ember

namespace ember {
// The largest finite value of a floating type, as a double.
template <typename T>
constexpr double largest_finite() {
  if constexpr (std::is_same_v<T, Half>) {
    return 65504.0;
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return 3.3895313892515355e38;
  } else {
    return static_cast<double>(std::numeric_limits<T>::max());
  }
}

template <typename T>
T Scalar::to_checked(const char* op) const {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    bool fits;
    if (kind_ == Kind::Int || kind_ == Kind::Bool) {
      fits = i_ >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
             (i_ < 0 ||
              static_cast<uint64_t>(i_) <= static_cast<uint64_t>(std::numeric_limits<T>::max()));
    } else {
      if (kind_ == Kind::Complex && c_.imag() != 0) fits = false;
      double d = to_double();
      fits = std::isfinite(d) && d >= static_cast<double>(std::numeric_limits<T>::min()) &&
             d <= static_cast<double>(std::numeric_limits<T>::max());
    }
    EMBER_CHECK(fits, "[", op, "] value cannot be converted to type ",
                dtype_name(scalar_type_of<T>), " without overflow");
  } else if constexpr (!is_complex_v<T>) {
    EMBER_CHECK(kind_ != Kind::Complex || c_.imag() == 0, "[", op,
                "] value cannot be converted to type ", dtype_name(scalar_type_of<T>),
                " without overflow");
    if constexpr (!std::is_same_v<T, bool> && !std::is_same_v<T, double>) {
      // A finite value beyond the type's range would silently become inf (1e300 as float32);
      // inf and nan themselves convert.
      const double d = to_double();
      EMBER_CHECK(!std::isfinite(d) || std::abs(d) <= largest_finite<T>(), "[", op,
                  "] value cannot be converted to type ", dtype_name(scalar_type_of<T>),
                  " without overflow");
    }
  }
  return to<T>();
}
}  // namespace ember
