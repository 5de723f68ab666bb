// Row primitives shared by the softmax, normalisation and loss kernels (float / double).
// Sums keep independent accumulators (lanes) so that GCC vectorises them without -ffast-math
// (a single accumulator is a serial dependency it may not reorder); the lanes are added in a
// fixed order, so results do not depend on the thread count.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/cpu/vec_math.h"

// Marks a kernel helper whose loops call vmath functions: all calls are inlined into it, so the
// loops vectorise (GCC may otherwise keep vmath::exp_impl out of line and run them one element
// at a time).
#define EMBER_NN_FLATTEN __attribute__((flatten))

namespace ember {
namespace native {
namespace nn_rows {

// max(x[0..n)), ignoring NaN (a NaN row still gives NaN results through x - max).
template <typename T>
inline T max(const T* x, int64_t n) {
  constexpr int L = 128 / sizeof(T);
  T m[L];
  for (int j = 0; j < L; ++j) m[j] = -std::numeric_limits<T>::infinity();
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    for (int j = 0; j < L; ++j) m[j] = x[i + j] > m[j] ? x[i + j] : m[j];
  }
  T r = -std::numeric_limits<T>::infinity();
  for (int j = 0; j < L; ++j) r = m[j] > r ? m[j] : r;
  for (; i < n; ++i) r = x[i] > r ? x[i] : r;
  return r;
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

// y = softmax(x) or log_softmax(x) over one contiguous row (y may not alias x).
template <typename T>
EMBER_NN_FLATTEN inline void softmax(const T* x, T* y, int64_t n, bool log) {
  const T m = max(x, n);
  if (log) {
    const T s = sum<T>(n, [&](int64_t i) { return vmath::exp(x[i] - m); });
    const T lse = std::log(s);
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) - lse;
  } else {
    // exp stored and summed in one pass.
    const T inv = T(1) / sum<T>(n, [&](int64_t i) { return y[i] = vmath::exp(x[i] - m); });
    for (int64_t i = 0; i < n; ++i) y[i] *= inv;
  }
}

constexpr int64_t kBlock = 64;

// softmax / log_softmax of columns [0, L) (L <= kBlock) of the rows x[k * inner], k in [0, n):
// the reduced dim is strided; the per-column max / sum are small arrays the loops vectorise over.
template <typename T>
EMBER_NN_FLATTEN void softmax_columns(const T* x, T* y, int64_t n, int64_t inner, int64_t L,
                                      bool log) {
  T mx[kBlock], s[kBlock];
  for (int64_t j = 0; j < L; ++j) {
    mx[j] = x[j];
    s[j] = 0;
  }
  for (int64_t k = 1; k < n; ++k) {
    const T* row = x + k * inner;
    for (int64_t j = 0; j < L; ++j) mx[j] = row[j] > mx[j] ? row[j] : mx[j];
  }
  for (int64_t k = 0; k < n; ++k) {
    const T* row = x + k * inner;
    T* out = y + k * inner;
    for (int64_t j = 0; j < L; ++j) {
      const T e = vmath::exp(row[j] - mx[j]);
      if (!log) out[j] = e;
      s[j] += e;
    }
  }
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
}  // namespace native
}  // namespace ember
