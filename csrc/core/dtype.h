// Scalar types (dtypes), their properties and PyTorch's type promotion.
#pragma once
#include <complex>
#include <cstdint>
#include <string>

#include "core/half.h"

namespace ember {

// The order is part of the promotion table in dtype.cpp; append new types at the end.
enum class ScalarType : int8_t {
  Bool = 0,
  UInt8,
  Int8,
  Int16,
  Int32,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  Complex64,
  Complex128,
  // Quantized: integers plus a Quantizer on the tensor (core/quantizer.h) that maps them to
  // real values; no arithmetic or type promotion (docs/design/quantization.md).
  QInt8,
  QUInt8,
  QInt32,
  // 4-bit unsigned values (embedding weights); stored one per byte in memory, packed two per
  // byte by int_repr(), in files and in the packed embedding weights.
  QUInt4x2,
  Undefined,
};
constexpr int kNumScalarTypes = static_cast<int>(ScalarType::Undefined);
// The types that take part in type promotion (the promotion table's rows).
constexpr int kNumPromotableScalarTypes = static_cast<int>(ScalarType::QInt8);

using complex64 = std::complex<float>;
using complex128 = std::complex<double>;

size_t element_size(ScalarType t);
const char* dtype_name(ScalarType t);  // "float32"

inline bool is_floating(ScalarType t) {
  return t == ScalarType::Float16 || t == ScalarType::BFloat16 || t == ScalarType::Float32 ||
         t == ScalarType::Float64;
}
inline bool is_complex(ScalarType t) {
  return t == ScalarType::Complex64 || t == ScalarType::Complex128;
}
inline bool is_integral(ScalarType t, bool include_bool) {
  return (t >= ScalarType::UInt8 && t <= ScalarType::Int64) ||
         (include_bool && t == ScalarType::Bool);
}
inline bool is_quantized(ScalarType t) {
  return t == ScalarType::QInt8 || t == ScalarType::QUInt8 || t == ScalarType::QInt32 ||
         t == ScalarType::QUInt4x2;
}
// The integer type a quantized type stores (qint8 -> int8); other types unchanged.
inline ScalarType quantized_storage_type(ScalarType t) {
  switch (t) {
    case ScalarType::QInt8:
      return ScalarType::Int8;
    case ScalarType::QUInt8:
    case ScalarType::QUInt4x2:
      return ScalarType::UInt8;
    case ScalarType::QInt32:
      return ScalarType::Int32;
    default:
      return t;
  }
}
inline bool is_signed(ScalarType t) {
  return t != ScalarType::Bool && t != ScalarType::UInt8 && t != ScalarType::QUInt8 &&
         t != ScalarType::QUInt4x2;
}
ScalarType to_complex(ScalarType t);  // float32 -> complex64, float64 -> complex128
ScalarType to_real(ScalarType t);     // complex64 -> float32, others unchanged

ScalarType promote_types(ScalarType a, ScalarType b);
// Whether a value of `from` may be written to `to` without a category downgrade (torch.can_cast).
bool can_cast(ScalarType from, ScalarType to);

ScalarType default_dtype();  // float32 unless set_default_dtype changed it
void set_default_dtype(ScalarType t);
inline ScalarType default_complex_dtype() {
  return to_complex(default_dtype());
}

// C++ type <-> ScalarType.
template <typename T>
struct ScalarTypeOf;
#define EMBER_SCALAR_TYPE_OF(T, ST)                     \
  template <>                                           \
  struct ScalarTypeOf<T> {                              \
    static constexpr ScalarType value = ScalarType::ST; \
  };
EMBER_SCALAR_TYPE_OF(bool, Bool)
EMBER_SCALAR_TYPE_OF(uint8_t, UInt8)
EMBER_SCALAR_TYPE_OF(int8_t, Int8)
EMBER_SCALAR_TYPE_OF(int16_t, Int16)
EMBER_SCALAR_TYPE_OF(int32_t, Int32)
EMBER_SCALAR_TYPE_OF(int64_t, Int64)
EMBER_SCALAR_TYPE_OF(Half, Float16)
EMBER_SCALAR_TYPE_OF(BFloat16, BFloat16)
EMBER_SCALAR_TYPE_OF(float, Float32)
EMBER_SCALAR_TYPE_OF(double, Float64)
EMBER_SCALAR_TYPE_OF(complex64, Complex64)
EMBER_SCALAR_TYPE_OF(complex128, Complex128)
#undef EMBER_SCALAR_TYPE_OF

template <typename T>
constexpr ScalarType scalar_type_of = ScalarTypeOf<T>::value;

// Accumulation / compute type: 16-bit floats compute in float, small ints stay themselves.
template <typename T>
struct AccType {
  using type = T;
};
template <>
struct AccType<Half> {
  using type = float;
};
template <>
struct AccType<BFloat16> {
  using type = float;
};
template <typename T>
using acc_type = typename AccType<T>::type;

// The real type of a (possibly complex) element type: complex<float> -> float.
template <typename T>
struct RealOf {
  using type = T;
};
template <typename T>
struct RealOf<std::complex<T>> {
  using type = T;
};

template <typename T>
constexpr bool is_complex_v = std::is_same_v<T, complex64> || std::is_same_v<T, complex128>;
template <typename T>
constexpr bool is_reduced_float_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T>
constexpr bool is_floating_v = std::is_floating_point_v<T> || is_reduced_float_v<T>;

}  // namespace ember
