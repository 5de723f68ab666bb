// 16-bit floating point storage types. Arithmetic converts to float (the accumulation type), so
// kernels written for T work for Half and BFloat16 by computing in `acc_type<T>`.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace ember {

namespace detail {
inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_f32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// IEEE binary16 <-> binary32 with round-to-nearest-even, subnormals, inf and NaN.
inline float half_bits_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  if (exp == 0x1f) return bits_f32(sign | 0x7f800000u | (mant << 13));  // inf / nan
  if (exp == 0) {
    if (mant == 0) return bits_f32(sign);
    // subnormal: value = mant * 2^-24
    float v = float(mant) * 5.9604644775390625e-08f;
    return sign ? -v : v;
  }
  return bits_f32(sign | ((exp + 112) << 23) | (mant << 13));
}

inline uint16_t float_to_half_bits(float f) {
  uint32_t x = f32_bits(f);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000);
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) {  // inf or nan
    return uint16_t(sign | 0x7c00 | (x > 0x7f800000u ? 0x200 | ((x >> 13) & 0x3ff) : 0));
  }
  if (x >= 0x477ff000u) return uint16_t(sign | 0x7c00);  // rounds to inf
  if (x < 0x38800000u) {  // result is subnormal or zero: round(value * 2^24)
    float v = bits_f32(x) * 16777216.0f;
    return uint16_t(sign | uint16_t(std::nearbyint(v)));
  }
  // normal: rebias exponent, round mantissa to nearest even
  uint32_t mant_odd = (x >> 13) & 1;
  x += 0xc8000fffu + mant_odd;  // (-112 << 23) + rounding bias
  return uint16_t(sign | (x >> 13));
}

inline float bf16_bits_to_float(uint16_t b) {
  return bits_f32(uint32_t(b) << 16);
}
inline uint16_t float_to_bf16_bits(float f) {
  uint32_t x = f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40);  // quiet nan
  x += 0x7fffu + ((x >> 16) & 1);                                          // round to nearest even
  return uint16_t(x >> 16);
}
}  // namespace detail

struct Half {
  uint16_t bits = 0;
  Half() = default;
  Half(float f) : bits(detail::float_to_half_bits(f)) {}  // NOLINT: implicit like a float
  operator float() const { return detail::half_bits_to_float(bits); }
  static Half from_bits(uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }
};

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  BFloat16(float f) : bits(detail::float_to_bf16_bits(f)) {}  // NOLINT: implicit like a float
  operator float() const { return detail::bf16_bits_to_float(bits); }
  static BFloat16 from_bits(uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "16-bit types must be 2 bytes");

}  // namespace ember
