// float16 / bfloat16 <-> Vec<float>, a vector at a time: bfloat16 by integer shifts and
// round-to-nearest-even on the bits, float16 by the F16C instructions (every level above
// `default`; `default` converts element by element).
#pragma once
#include "kernels/cpu/cpu_level.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "core/half.h"
#include "kernels/cpu/vec/vec.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace vec {

// One Vec<float>'s worth of 16-bit lanes.
typedef uint16_t HalfLanes __attribute__((vector_size(kVecBytes / 2)));

inline Vec<float> load_bf16(const uint16_t* p) {
  HalfLanes h;
  std::memcpy(&h, p, sizeof h);
  const Vec<float>::Bits wide = __builtin_convertvector(h, Vec<float>::Bits);
  return Vec<float>::from_bits(wide << 16);
}

// Round to nearest even; NaN stays a quiet NaN.
inline void store_bf16(uint16_t* p, Vec<float> x) {
  using Bits = Vec<float>::Bits;
  const Bits u = x.bits();
  const Bits rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const Bits quiet = (u >> 16) | 0x40u;
  const Bits r = (u & 0x7fffffffu) > 0x7f800000u ? quiet : rounded;
  const HalfLanes h = __builtin_convertvector(r, HalfLanes);
  std::memcpy(p, &h, sizeof h);
}

#if EMBER_CPU_LEVEL >= 1
constexpr bool kHasVectorHalf = true;
inline Vec<float> load_f16(const uint16_t* p) {
#if EMBER_CPU_LEVEL >= 2
  // The zero-masked forms: GCC 12 warns that the plain ones read an uninitialised register.
  return from_reg(
      _mm512_maskz_cvtph_ps(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))));
#else
  return from_reg(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
#endif
}
inline void store_f16(uint16_t* p, Vec<float> x) {
#if EMBER_CPU_LEVEL >= 2
  _mm256_storeu_si256(
      reinterpret_cast<__m256i*>(p),
      _mm512_maskz_cvtps_ph(0xffff, reg(x), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#else
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                   _mm256_cvtps_ph(reg(x), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
}
#else
// No F16C at `default`: lane by lane through core/half.h's conversions.
constexpr bool kHasVectorHalf = false;
inline Vec<float> load_f16(const uint16_t* p) {
  float lanes[Vec<float>::size];
  for (int i = 0; i < Vec<float>::size; ++i) {
    Half h;
    h.bits = p[i];
    lanes[i] = static_cast<float>(h);
  }
  return Vec<float>::load(lanes);
}
inline void store_f16(uint16_t* p, Vec<float> x) {
  float lanes[Vec<float>::size];
  x.store(lanes);
  for (int i = 0; i < Vec<float>::size; ++i) p[i] = Half(lanes[i]).bits;
}
#endif

}  // namespace vec
}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
