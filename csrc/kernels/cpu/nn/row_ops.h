// Row primitives shared by the softmax, normalisation and loss kernels (float / double).
// The hot ones (max, softmax, log_softmax, the moments of a contiguous row, the normalised
// output) are written on explicit vectors (vec/vec.h); the generic sums over an index lambda keep
// independent accumulators (lanes) so that the compiler vectorises them without -ffast-math.
// Lanes are added in a fixed order, so results do not depend on the thread count.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include "kernels/cpu/cpu_level.h"

#include "kernels/cpu/vec/vec.h"
#include "kernels/cpu/vec/vec_math.h"
#include "kernels/cpu/vec_math.h"

// Marks a kernel helper whose loops call vmath functions: all calls are inlined into it, so the
// loops vectorise (GCC may otherwise keep vmath::exp_impl out of line and run them one element
// at a time).
#define EMBER_NN_FLATTEN __attribute__((flatten))

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace nn_rows {

// max(x[0..n)), ignoring NaN (a NaN row still gives NaN results through x - max).
template <typename T>
inline T max(const T* x, int64_t n) {
  using V = vec::Vec<T>;
  constexpr T kLow = -std::numeric_limits<T>::infinity();
  V m0 = kLow, m1 = kLow;
  int64_t i = 0;
  for (; i + 2 * V::size <= n; i += 2 * V::size) {
    const V a = V::load(x + i), b = V::load(x + i + V::size);
    m0 = vec::select(a > m0, a, m0);
    m1 = vec::select(b > m1, b, m1);
  }
  for (; i < n; i += V::size) {
    const V a = i + V::size <= n ? V::load(x + i) : V::load_partial(x + i, n - i, kLow);
    m0 = vec::select(a > m0, a, m0);
  }
  return vec::reduce_max(vec::select(m1 > m0, m1, m0));
}

// sum(x[0..n)) in T with vector accumulators, the lanes added in a fixed order.
template <typename T>
inline T sum_contiguous(const T* x, int64_t n) {
  using V = vec::Vec<T>;
  V s0 = T(0), s1 = T(0);
  int64_t i = 0;
  for (; i + 2 * V::size <= n; i += 2 * V::size) {
    s0 = s0 + V::load(x + i);
    s1 = s1 + V::load(x + i + V::size);
  }
  for (; i < n; i += V::size)
    s0 = s0 + (i + V::size <= n ? V::load(x + i) : V::load_partial(x + i, n - i));
  return vec::reduce_add(s0 + s1);
}

// sum(f(i)) over [0, n) accumulated in Acc: 128 bytes of independent accumulators (four AVX2
// vectors), so the adds do not wait on each other's latency.
template <typename Acc, typename F>
inline Acc sum(int64_t n, const F& f) {
  constexpr int L = 128 / sizeof(Acc);
  Acc s[L] = {};
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    for (int j = 0; j < L; ++j) s[j] += static_cast<Acc>(f(i + j));
  }
  Acc r = 0;
  for (; i < n; ++i) r += static_cast<Acc>(f(i));
  for (int j = 0; j < L; ++j) r += s[j];
  return r;
}

// sum(f(i)) over [0, n): lanes of T (fast, vectorised) over chunks of kChunk
// elements, the chunk sums added in double (so long rows keep their accuracy).
constexpr int64_t kChunk = 2048;
template <typename T, typename F>
inline double sum_blocked(int64_t n, const F& f) {
  double total = 0;
  for (int64_t c0 = 0; c0 < n; c0 += kChunk) {
    const int64_t len = n - c0 < kChunk ? n - c0 : kChunk;
    total += static_cast<double>(sum<T>(len, [&](int64_t i) { return f(c0 + i); }));
  }
  return total;
}

// Mean and biased variance of f(0), ..., f(n - 1) (n > 0) in one pass over the data, shifted by
// f(0) so that sum(d^2) - sum(d)^2 / n does not cancel catastrophically (d = f(i) - f(0) is of
// the order of the spread, not of the mean). Lanes of T per chunk, chunks added in double.
template <typename T, typename F>
inline void moments(int64_t n, const F& f, double& mean, double& var) {
  constexpr int L = 128 / sizeof(T);
  const T shift = f(0);
  double s1 = 0, s2 = 0;
  for (int64_t c0 = 0; c0 < n; c0 += kChunk) {
    const int64_t len = n - c0 < kChunk ? n - c0 : kChunk;
    T a[L] = {}, b[L] = {};
    int64_t i = 0;
    for (; i + L <= len; i += L) {
      for (int j = 0; j < L; ++j) {
        const T d = f(c0 + i + j) - shift;
        a[j] += d;
        b[j] += d * d;
      }
    }
    for (; i < len; ++i) {
      const T d = f(c0 + i) - shift;
      s1 += d;
      s2 += double(d) * d;
    }
    for (int j = 0; j < L; ++j) {
      s1 += a[j];
      s2 += b[j];
    }
  }
  const double m = s1 / n;
  mean = double(shift) + m;
  var = std::max(s2 / n - m * m, 0.0);
}

// sum(e^(x - m)) over one contiguous row; with y, the exps are stored there too. The tail's
// padding lanes are -inf, whose exp is 0.
template <typename T>
inline T exp_sum(const T* x, T* y, int64_t n, T m_scalar) {
  using V = vec::Vec<T>;
  constexpr T kLow = -std::numeric_limits<T>::infinity();
  const V m(m_scalar);
  V s0 = T(0), s1 = T(0);
  int64_t i = 0;
  for (; i + 2 * V::size <= n; i += 2 * V::size) {
    const V e0 = vec::exp(V::load(x + i) - m), e1 = vec::exp(V::load(x + i + V::size) - m);
    if (y) {
      e0.store(y + i);
      e1.store(y + i + V::size);
    }
    s0 = s0 + e0;
    s1 = s1 + e1;
  }
  for (; i < n; i += V::size) {
    const int64_t len = std::min<int64_t>(V::size, n - i);
    const V e = vec::exp(V::load_partial(x + i, len, kLow) - m);
    if (y) e.store_partial(y + i, len);
    s0 = s0 + e;
  }
  return vec::reduce_add(s0 + s1);
}

// log(sum(e^x)) over one contiguous row, as max + log(sum(e^(x - max))): log_softmax(x) is
// x - logsumexp(x), exactly as softmax(log=true) computes it.
template <typename T>
inline T logsumexp(const T* x, int64_t n) {
  const T m = max(x, n);
  return m + T(std::log(exp_sum<T>(x, nullptr, n, m)));
}

// y = softmax(x) or log_softmax(x) over one contiguous row (y may not alias x).
template <typename T>
inline void softmax(const T* x, T* y, int64_t n, bool log) {
  using V = vec::Vec<T>;
  const T mx = max(x, n);
  const V m(mx);
  // e^(x - max), summed (and stored for softmax) in one pass.
  const T s = exp_sum<T>(x, log ? nullptr : y, n, mx);
  int64_t i = 0;
  if (log) {
    const V shift = m + T(std::log(s));
    for (i = 0; i + V::size <= n; i += V::size) (V::load(x + i) - shift).store(y + i);
    if (i < n) (V::load_partial(x + i, n - i) - shift).store_partial(y + i, n - i);
  } else {
    const V inv = T(1) / s;
    for (i = 0; i + V::size <= n; i += V::size) (V::load(y + i) * inv).store(y + i);
    if (i < n) (V::load_partial(y + i, n - i) * inv).store_partial(y + i, n - i);
  }
}

// Mean and biased variance of a contiguous row (n > 0), shifted by x[0] against cancellation
// (as moments() below), on vectors; chunk sums added in double.
template <typename T>
inline void moments_contiguous(const T* x, int64_t n, double& mean, double& var) {
  using V = vec::Vec<T>;
  const T shift = x[0];
  const V vs = shift;
  double s1 = 0, s2 = 0;
  for (int64_t c0 = 0; c0 < n; c0 += kChunk) {
    const int64_t len = std::min<int64_t>(kChunk, n - c0);
    const T* xc = x + c0;
    V a0 = T(0), a1 = T(0), b0 = T(0), b1 = T(0);
    int64_t i = 0;
    for (; i + 2 * V::size <= len; i += 2 * V::size) {
      const V d0 = V::load(xc + i) - vs, d1 = V::load(xc + i + V::size) - vs;
      a0 = a0 + d0;
      a1 = a1 + d1;
      b0 = vec::fma(d0, d0, b0);
      b1 = vec::fma(d1, d1, b1);
    }
    for (; i < len; i += V::size) {
      const int64_t k = std::min<int64_t>(V::size, len - i);
      const V d = V::load_partial(xc + i, k, shift) - vs;  // padding lanes give d = 0
      a0 = a0 + d;
      b0 = vec::fma(d, d, b0);
    }
    s1 += vec::reduce_add(a0 + a1);
    s2 += vec::reduce_add(b0 + b1);
  }
  const double m = s1 / n;
  mean = double(shift) + m;
  var = std::max(s2 / n - m * m, 0.0);
}

// sum(x[i]^2) over a contiguous row, chunk sums added in double.
template <typename T>
inline double sum_squares(const T* x, int64_t n) {
  using V = vec::Vec<T>;
  double total = 0;
  for (int64_t c0 = 0; c0 < n; c0 += kChunk) {
    const int64_t len = std::min<int64_t>(kChunk, n - c0);
    V s0 = T(0), s1 = T(0);
    int64_t i = 0;
    for (; i + 2 * V::size <= len; i += 2 * V::size) {
      const V a = V::load(x + c0 + i), b = V::load(x + c0 + i + V::size);
      s0 = vec::fma(a, a, s0);
      s1 = vec::fma(b, b, s1);
    }
    for (; i < len; i += V::size) {
      const V a = V::load_partial(x + c0 + i, std::min<int64_t>(V::size, len - i));
      s0 = vec::fma(a, a, s0);
    }
    total += vec::reduce_add(s0 + s1);
  }
  return total;
}

// y = (x * a + c) * w + b over a contiguous row; w and b may be null.
template <typename T>
inline void normalize_affine(const T* x, T* y, int64_t n, T a, T c, const T* w, const T* b) {
  using V = vec::Vec<T>;
  const V va = a, vc = c;
  auto one = [&](int64_t i, int64_t len) {
    V r = vec::fma(V::load_n(x + i, len), va, vc);
    if (w) r = r * V::load_n(w + i, len);
    if (b) r = r + V::load_n(b + i, len);
    r.store_n(y + i, len);
  };
  int64_t i = 0;
  for (; i + V::size <= n; i += V::size) one(i, V::size);
  if (i < n) one(i, n - i);
}

constexpr int64_t kBlock = 64;

// The per-column max mx and sum s of e^(x - mx) over columns [0, L) (L <= kBlock) of the rows
// x[k * inner], k in [0, n); with y, the exps are stored at the same places in y too.
template <typename T>
void column_exp_sums(const T* x, T* y, int64_t n, int64_t inner, int64_t L, T* mx, T* s) {
  for (int64_t j = 0; j < L; ++j) {
    mx[j] = x[j];
    s[j] = 0;
  }
  for (int64_t k = 1; k < n; ++k) {
    const T* row = x + k * inner;
    for (int64_t j = 0; j < L; ++j) mx[j] = row[j] > mx[j] ? row[j] : mx[j];
  }
  using V = vec::Vec<T>;
  for (int64_t k = 0; k < n; ++k) {
    const T* row = x + k * inner;
    for (int64_t j = 0; j < L; j += V::size) {
      const int64_t len = std::min<int64_t>(V::size, L - j);
      const V e = vec::exp(V::load_n(row + j, len) - V::load_n(mx + j, len));
      if (y) e.store_n(y + k * inner + j, len);
      (V::load_n(s + j, len) + e).store_n(s + j, len);
    }
  }
}

// logsumexp of columns [0, L) (L <= kBlock) of the rows x[k * inner], k in [0, n), into lse[0, L).
template <typename T>
void logsumexp_columns(const T* x, int64_t n, int64_t inner, int64_t L, T* lse) {
  T mx[kBlock], s[kBlock];
  column_exp_sums<T>(x, nullptr, n, inner, L, mx, s);
  for (int64_t j = 0; j < L; ++j) lse[j] = mx[j] + std::log(s[j]);
}

// softmax / log_softmax of columns [0, L) (L <= kBlock) of the rows x[k * inner], k in [0, n):
// the reduced dim is strided; the per-column max / sum are small arrays the loops vectorise over.
template <typename T>
void softmax_columns(const T* x, T* y, int64_t n, int64_t inner, int64_t L, bool log) {
  T mx[kBlock], s[kBlock];
  column_exp_sums<T>(x, log ? nullptr : y, n, inner, L, mx, s);
  if (log) {
    for (int64_t j = 0; j < L; ++j) s[j] = std::log(s[j]);
    for (int64_t k = 0; k < n; ++k) {
      const T* row = x + k * inner;
      T* out = y + k * inner;
      for (int64_t j = 0; j < L; ++j) out[j] = (row[j] - mx[j]) - s[j];
    }
  } else {
    for (int64_t j = 0; j < L; ++j) s[j] = T(1) / s[j];
    for (int64_t k = 0; k < n; ++k) {
      T* out = y + k * inner;
      for (int64_t j = 0; j < L; ++j) out[j] *= s[j];
    }
  }
}

}  // namespace nn_rows
}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
