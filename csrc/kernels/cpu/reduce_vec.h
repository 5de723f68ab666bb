// Branch-free float math that the compiler can vectorise (std::exp cannot be, without
// -ffast-math). Each function has a scalar reference in the test suite (test_reductions.cpp).
#pragma once
#include <cstdint>
#include "kernels/cpu/cpu_level.h"
#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {

// IEEE binary16 bits -> float without branches (so conversion loops vectorise): the exponent and
// mantissa shifted into place read as a float 2^-112 times the value, subnormals included;
// infinities and NaNs get the all-ones exponent. Exact for every input.
inline float half_bits_to_float_fast(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t em = h & 0x7fffu;
  const float finite = __builtin_bit_cast(float, em << 13) * 0x1p112f;
  const float special = __builtin_bit_cast(float, (em << 13) | 0x7f800000u);
  const float mag = em >= 0x7c00u ? special : finite;
  return __builtin_bit_cast(float, __builtin_bit_cast(uint32_t, mag) | sign);
}

// e^x for float with about 1 ulp of error (Cephes' expf: x = n ln2 + r, |r| <= ln2/2, a
// degree-6 polynomial for e^r, then 2^n put in the exponent bits). Results below FLT_MIN
// (x < -87.33) flush to 0, x > 88.72 gives inf; NaN gives NaN.
inline float vexpf(float x) {
  const float hi = 88.7228390f, lo = -87.3365448f;
  const bool nan = x != x;
  const bool under = x < lo;
  const bool over = x > hi;
  float xc = x < lo ? lo : (x > hi ? hi : x);
  xc = nan ? 0.0f : xc;
  // n = round(x / ln2) by the 1.5 * 2^23 trick (floorf does not vectorise without
  // -fno-trapping-math); r = x - n ln2 with ln2 split in two for exactness.
  const float fn = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = xc - fn * 0.693359375f;
  r = r - fn * -2.12194440e-4f;
  const float z = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * z + r + 1.0f;
  // 2^n: n in [-126, 128]; split so the exponent field never overflows.
  const int32_t n = static_cast<int32_t>(fn);
  const int32_t n1 = n >> 1, n2 = n - n1;
  const float s1 = __builtin_bit_cast(float, static_cast<uint32_t>(n1 + 127) << 23);
  const float s2 = __builtin_bit_cast(float, static_cast<uint32_t>(n2 + 127) << 23);
  float y = p * s1 * s2;
  y = under ? 0.0f : y;
  y = over ? __builtin_inff() : y;
  return nan ? x : y;
}

// n float16 values (raw bits) to float: F16C converts 8 per instruction where the build has it
// (every x86 build of Ember: -march=native or -mf16c), the branch-free trick otherwise.
inline void half_bits_to_float_block(const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  // Bounded by n rounded down rather than by `i + 8 <= n`: with the latter GCC cannot prove the
  // tail loop below dead for a constant n and warns that it overflows (-Waggressive-loop-...).
  const int64_t vector_end = n - n % 8;
  for (; i < vector_end; i += 8) {
    _mm256_storeu_ps(out + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  }
#endif
  for (; i < n; ++i) out[i] = half_bits_to_float_fast(in[i]);
}

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
