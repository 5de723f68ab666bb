// The vector operations the int8 kernels need, one definition per CPU capability level (the
// translation unit's EMBER_CPU_LEVEL): 128-bit SSSE3/SSE4.1 at the baseline, 256-bit AVX2,
// 512-bit AVX-512BW, and AVX-512 VNNI at the top level. See kernels/quantized_stubs.h for why
// there are two u8 x s8 dot products (dot7 for 7-bit activations, dot8 for full 8-bit ones).
#pragma once
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/cpu/cpu_level.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace int8_isa {

inline int32_t load_u32(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// 2 * `bytes` 4-bit values (two a byte, the even one low) as bytes in order, in the low bytes.
inline __m128i unpack_nibbles(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  std::memcpy(&v, p, bytes);
  const __m128i x = _mm_cvtsi64_si128(static_cast<long long>(v));
  const __m128i mask = _mm_set1_epi8(0x0F);
  return _mm_unpacklo_epi8(_mm_and_si128(x, mask), _mm_and_si128(_mm_srli_epi16(x, 4), mask));
}

#if EMBER_CPU_LEVEL >= 2
struct Isa {
  using I = __m512i;
  using F = __m512;
  static constexpr int kLanes = 16;
  static constexpr int kRows = 8;  // 8 x 2 accumulators of 32 registers
  static I zero() { return _mm512_setzero_si512(); }
  static I load(const void* p) { return _mm512_loadu_si512(p); }
  // kLanes bytes widened to int32 lanes.
  static I load_u8i(const uint8_t* p) {
    return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static I broadcast4(const uint8_t* p) { return _mm512_set1_epi32(load_u32(p)); }
  // spread(window(p), idx): the kLanes / 4 dwords at p, dword idx[l] into lane l.
  static I window(const uint8_t* p) {
    return _mm512_zextsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static I spread(I window, I idx) { return _mm512_permutexvar_epi32(idx, window); }
  static I set1(int32_t v) { return _mm512_set1_epi32(v); }
  static I add(I a, I b) { return _mm512_add_epi32(a, b); }
  static I sub(I a, I b) { return _mm512_sub_epi32(a, b); }
  static I mullo(I a, I b) { return _mm512_mullo_epi32(a, b); }
  static void store(int32_t* p, I v) { _mm512_storeu_si512(p, v); }
#if EMBER_CPU_LEVEL >= 3
  static I dot7(I acc, I a, I b) {
    return _mm512_dpbusd_epi32(acc, a, b);
  }
  static I dot8(I acc, I a, I b) {
    return _mm512_dpbusd_epi32(acc, a, b);
  }
#else
  static I dot7(I acc, I a, I b) {
    return _mm512_add_epi32(acc,
                            _mm512_madd_epi16(_mm512_maddubs_epi16(a, b), _mm512_set1_epi16(1)));
  }
  static I dot8(I acc, I a, I b) {
    const I ones = _mm512_set1_epi16(1);
    const I hi = _mm512_and_si512(_mm512_srli_epi16(a, 1), _mm512_set1_epi8(0x7f));
    const I lo = _mm512_and_si512(a, _mm512_set1_epi8(1));
    const I h = _mm512_slli_epi32(_mm512_madd_epi16(_mm512_maddubs_epi16(hi, b), ones), 1);
    const I l = _mm512_madd_epi16(_mm512_maddubs_epi16(lo, b), ones);
    return _mm512_add_epi32(acc, _mm512_add_epi32(h, l));
  }
#endif
  static F to_float(I v) {
    return _mm512_cvtepi32_ps(v);
  }
  static F loadf(const float* p) {
    return _mm512_loadu_ps(p);
  }
  static F set1f(float v) {
    return _mm512_set1_ps(v);
  }
  static F mulf(F a, F b) {
    return _mm512_mul_ps(a, b);
  }
  static F addf(F a, F b) {
    return _mm512_add_ps(a, b);
  }
  static F fmaddf(F a, F b, F c) {  // a * b + c
    return _mm512_fmadd_ps(a, b, c);
  }
  static F maxf(F a, F b) {
    return _mm512_max_ps(a, b);
  }
  static F minf(F a, F b) {
    return _mm512_min_ps(a, b);
  }
  static void storef(float* p, F v) {
    _mm512_storeu_ps(p, v);
  }
  static bool any_nan(F v) {
    return _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q) != 0;
  }
  // kLanes bytes widened to floats.
  static F load_u8f(const uint8_t* p) {
    return _mm512_cvtepi32_ps(
        _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  }
  static F subf(F a, F b) {
    return _mm512_sub_ps(a, b);
  }
  // kLanes 4-bit values from kLanes / 2 bytes, as floats.
  static F load_u4f(const uint8_t* p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(unpack_nibbles(p, kLanes / 2)));
  }
  // clamp(nearbyint(x) + zp, 0, qmax) of kLanes floats (NaN -> 0) stored as bytes. Rounding
  // before adding the zero point, as PyTorch: the sum of two integers is exact.
  static void store_u8(uint8_t* p, F x, F zp, F qmax) {
    const F r = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const F c = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(r, zp), _mm512_setzero_ps()), qmax);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(c)));
  }
  // store_u8 of two vectors with qmax 255, to pa and pb, in integer arithmetic: the conversion
  // rounds to nearest even (nearbyint; NaN, kept by the min's operand order, converts to
  // INT32_MIN and stores 0), the zero point is added and the clamp saturates. With relu the
  // floor is the zero point: quantizing max(y, 0).
  static void store_u8_pair(uint8_t* pa, uint8_t* pb, F xa, F xb, int32_t zp, bool relu) {
    const F big = _mm512_set1_ps(65536.f);  // beyond 255 - zp, inside int32
    const I z = _mm512_set1_epi32(zp), floor = relu ? z : _mm512_setzero_si512();
    const I qa =
        _mm512_max_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(_mm512_min_ps(big, xa)), z), floor);
    const I qb =
        _mm512_max_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(_mm512_min_ps(big, xb)), z), floor);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(pa), _mm512_cvtusepi32_epi8(qa));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(pb), _mm512_cvtusepi32_epi8(qb));
  }
};
#elif EMBER_CPU_LEVEL == 1
struct Isa {
  using I = __m256i;
  using F = __m256;
  static constexpr int kLanes = 8;
  static constexpr int kRows = 4;  // 8 accumulators; dot8 needs 6 more registers of 16
  static I zero() { return _mm256_setzero_si256(); }
  static I load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
  static I load_u8i(const uint8_t* p) {
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  static I broadcast4(const uint8_t* p) { return _mm256_set1_epi32(load_u32(p)); }
  static I window(const uint8_t* p) {
    return _mm256_zextsi128_si256(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  static I spread(I window, I idx) { return _mm256_permutevar8x32_epi32(window, idx); }
  static I set1(int32_t v) { return _mm256_set1_epi32(v); }
  static I add(I a, I b) { return _mm256_add_epi32(a, b); }
  static I sub(I a, I b) { return _mm256_sub_epi32(a, b); }
  static I mullo(I a, I b) { return _mm256_mullo_epi32(a, b); }
  static void store(int32_t* p, I v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
  static I dot7(I acc, I a, I b) {
    return _mm256_add_epi32(acc,
                            _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), _mm256_set1_epi16(1)));
  }
  static I dot8(I acc, I a, I b) {
    const I ones = _mm256_set1_epi16(1);
    const I hi = _mm256_and_si256(_mm256_srli_epi16(a, 1), _mm256_set1_epi8(0x7f));
    const I lo = _mm256_and_si256(a, _mm256_set1_epi8(1));
    const I h = _mm256_slli_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(hi, b), ones), 1);
    const I l = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, b), ones);
    return _mm256_add_epi32(acc, _mm256_add_epi32(h, l));
  }
  static F to_float(I v) { return _mm256_cvtepi32_ps(v); }
  static F loadf(const float* p) { return _mm256_loadu_ps(p); }
  static F set1f(float v) { return _mm256_set1_ps(v); }
  static F mulf(F a, F b) { return _mm256_mul_ps(a, b); }
  static F addf(F a, F b) { return _mm256_add_ps(a, b); }
  static F fmaddf(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F maxf(F a, F b) { return _mm256_max_ps(a, b); }
  static F minf(F a, F b) { return _mm256_min_ps(a, b); }
  static void storef(float* p, F v) { _mm256_storeu_ps(p, v); }
  static bool any_nan(F v) { return _mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0; }
  static F load_u8f(const uint8_t* p) {
    return _mm256_cvtepi32_ps(
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
  static F subf(F a, F b) { return _mm256_sub_ps(a, b); }
  static F load_u4f(const uint8_t* p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(unpack_nibbles(p, kLanes / 2)));
  }
  static void store_u8(uint8_t* p, F x, F zp, F qmax) {
    const F r = _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const F c = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(r, zp), _mm256_setzero_ps()), qmax);
    const __m256i i = _mm256_cvtps_epi32(c);  // 0..255 in each int32
    // Byte 0 of each int32 into the low 8 bytes: per-128-bit-lane shuffle, then join the lanes.
    const __m256i bytes = _mm256_shuffle_epi8(
        i, _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8,
                            12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));
    const __m128i lo = _mm256_castsi256_si128(bytes), hi = _mm256_extracti128_si256(bytes, 1);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_unpacklo_epi32(lo, hi));
  }
  // store_u8 of two vectors with qmax 255, to pa and pb, in integer arithmetic: the conversion
  // rounds to nearest even (nearbyint; NaN, kept by the min's operand order, converts to
  // INT32_MIN and stores 0), the saturating packs clamp, the zero point is added in between.
  // With relu the floor is the zero point: quantizing max(y, 0). Half the instructions of two
  // store_u8.
  static void store_u8_pair(uint8_t* pa, uint8_t* pb, F xa, F xb, int32_t zp, bool relu) {
    const F big = _mm256_set1_ps(65536.f);  // saturates to 32767, inside int32
    const __m256i z = _mm256_set1_epi16(static_cast<int16_t>(zp));
    const __m256i ia = _mm256_cvtps_epi32(_mm256_min_ps(big, xa));
    const __m256i ib = _mm256_cvtps_epi32(_mm256_min_ps(big, xb));
    // int16 lanes a0-3 b0-3 | a4-7 b4-7, then bytes in the same order in each 128-bit half.
    __m256i s = _mm256_adds_epi16(_mm256_packs_epi32(ia, ib), z);
    if (relu) s = _mm256_max_epi16(s, z);
    const __m256i bytes = _mm256_packus_epi16(s, s);
    const __m128i ordered = _mm256_castsi256_si128(
        _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 0, 0, 0, 0)));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(pa), ordered);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(pb), _mm_unpackhi_epi64(ordered, ordered));
  }
};
#else
struct Isa {
  using I = __m128i;
  using F = __m128;
  static constexpr int kLanes = 4;
  static constexpr int kRows = 4;
  static I zero() { return _mm_setzero_si128(); }
  static I load(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
  static I load_u8i(const uint8_t* p) {
    return _mm_cvtepu8_epi32(_mm_cvtsi32_si128(static_cast<int>(load_u32(p))));
  }
  static I broadcast4(const uint8_t* p) { return _mm_set1_epi32(load_u32(p)); }
  // One dword here: every index is 0.
  static I window(const uint8_t* p) { return _mm_set1_epi32(load_u32(p)); }
  static I spread(I window, I) { return window; }
  static I set1(int32_t v) { return _mm_set1_epi32(v); }
  static I add(I a, I b) { return _mm_add_epi32(a, b); }
  static I sub(I a, I b) { return _mm_sub_epi32(a, b); }
  static I mullo(I a, I b) { return _mm_mullo_epi32(a, b); }
  static void store(int32_t* p, I v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }
  static I dot7(I acc, I a, I b) {
    return _mm_add_epi32(acc, _mm_madd_epi16(_mm_maddubs_epi16(a, b), _mm_set1_epi16(1)));
  }
  static I dot8(I acc, I a, I b) {
    const I ones = _mm_set1_epi16(1);
    const I hi = _mm_and_si128(_mm_srli_epi16(a, 1), _mm_set1_epi8(0x7f));
    const I lo = _mm_and_si128(a, _mm_set1_epi8(1));
    const I h = _mm_slli_epi32(_mm_madd_epi16(_mm_maddubs_epi16(hi, b), ones), 1);
    const I l = _mm_madd_epi16(_mm_maddubs_epi16(lo, b), ones);
    return _mm_add_epi32(acc, _mm_add_epi32(h, l));
  }
  static F to_float(I v) { return _mm_cvtepi32_ps(v); }
  static F loadf(const float* p) { return _mm_loadu_ps(p); }
  static F set1f(float v) { return _mm_set1_ps(v); }
  static F mulf(F a, F b) { return _mm_mul_ps(a, b); }
  static F addf(F a, F b) { return _mm_add_ps(a, b); }
  // Not fused at this level: exact wherever the callers use it (integers below 2^24).
  static F fmaddf(F a, F b, F c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
  static F maxf(F a, F b) { return _mm_max_ps(a, b); }
  static F minf(F a, F b) { return _mm_min_ps(a, b); }
  static void storef(float* p, F v) { _mm_storeu_ps(p, v); }
  static bool any_nan(F v) { return _mm_movemask_ps(_mm_cmpunord_ps(v, v)) != 0; }
  static F load_u8f(const uint8_t* p) {
    return _mm_cvtepi32_ps(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(static_cast<int>(load_u32(p)))));
  }
  static F subf(F a, F b) { return _mm_sub_ps(a, b); }
  static F load_u4f(const uint8_t* p) {
    return _mm_cvtepi32_ps(_mm_cvtepu8_epi32(unpack_nibbles(p, kLanes / 2)));
  }
  static void store_u8(uint8_t* p, F x, F zp, F qmax) {
    const F r = _mm_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const F c = _mm_min_ps(_mm_max_ps(_mm_add_ps(r, zp), _mm_setzero_ps()), qmax);
    const __m128i bytes = _mm_shuffle_epi8(
        _mm_cvtps_epi32(c),
        _mm_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));
    const int32_t v = _mm_cvtsi128_si32(bytes);
    std::memcpy(p, &v, 4);
  }
  // As the 256-bit level's: two vectors requantized in integer arithmetic.
  static void store_u8_pair(uint8_t* pa, uint8_t* pb, F xa, F xb, int32_t zp, bool relu) {
    const F big = _mm_set1_ps(65536.f);
    const __m128i z = _mm_set1_epi16(static_cast<int16_t>(zp));
    __m128i s = _mm_adds_epi16(
        _mm_packs_epi32(_mm_cvtps_epi32(_mm_min_ps(big, xa)), _mm_cvtps_epi32(_mm_min_ps(big, xb))),
        z);
    if (relu) s = _mm_max_epi16(s, z);
    const __m128i bytes = _mm_packus_epi16(s, s);
    const int32_t va = _mm_cvtsi128_si32(bytes), vb = _mm_extract_epi32(bytes, 1);
    std::memcpy(pa, &va, 4);
    std::memcpy(pb, &vb, 4);
  }
};
#endif

}  // namespace int8_isa
}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
