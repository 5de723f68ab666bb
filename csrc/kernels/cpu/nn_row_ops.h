// Row primitives shared by the softmax, normalisation and loss kernels (float / double).
// Sums keep kLanes independent accumulators so that GCC vectorises them without -ffast-math
// (a single accumulator is a serial dependency it may not reorder); the lanes are added in a
// fixed order, so results do not depend on the thread count.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/cpu/vec_math.h"

namespace ember {
namespace nn_rows {

constexpr int kLanes = 8;

// max(x[0..n)), ignoring NaN (a NaN row still gives NaN results through x - max).
template <typename T>
inline T max(const T* x, int64_t n) {
  T m[kLanes];
  for (int j = 0; j < kLanes; ++j) m[j] = -std::numeric_limits<T>::infinity();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) m[j] = x[i + j] > m[j] ? x[i + j] : m[j];
  }
  T r = -std::numeric_limits<T>::infinity();
  for (int j = 0; j < kLanes; ++j) r = m[j] > r ? m[j] : r;
  for (; i < n; ++i) r = x[i] > r ? x[i] : r;
  return r;
}

// sum(f(i)) over [0, n) accumulated in Acc.
template <typename Acc, typename F>
inline Acc sum(int64_t n, const F& f) {
  Acc s[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) s[j] += static_cast<Acc>(f(i + j));
  }
  Acc r = 0;
  for (int j = 0; j < kLanes; ++j) r += s[j];
  for (; i < n; ++i) r += static_cast<Acc>(f(i));
  return r;
}

// y = softmax(x) or log_softmax(x) over one contiguous row (y may not alias x).
template <typename T>
inline void softmax(const T* x, T* y, int64_t n, bool log) {
  const T m = max(x, n);
  if (log) {
    const T s = sum<T>(n, [&](int64_t i) { return vmath::exp(x[i] - m); });
    const T lse = std::log(s);
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) - lse;
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = vmath::exp(x[i] - m);
    const T inv = T(1) / sum<T>(n, [&](int64_t i) { return y[i]; });
    for (int64_t i = 0; i < n; ++i) y[i] *= inv;
  }
}

}  // namespace nn_rows
}  // namespace ember
