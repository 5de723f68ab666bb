// Loop templates for reductions built by make_reduction (ops/reduce_common.h): operand 0 is the
// output (zero stride over reduced dims), operand 1 the input, same dtype T.
#pragma once
#include "dispatch/tensor_iterator.h"

namespace ember {

// Sums n elements at `in` (stride in bytes) with 8 independent accumulators in blocks, which
// is both vectorisable and far more accurate than one running sum (error grows like log n).
template <typename T>
T cascade_sum(const char* in, int64_t stride, int64_t n) {
  constexpr int64_t kLanes = 8;
  constexpr int64_t kBlock = 256;
  auto at = [&](int64_t i) { return *reinterpret_cast<const T*>(in + i * stride); };
  if (n <= kBlock) {
    T lanes[kLanes] = {};
    int64_t i = 0;
    if (stride == sizeof(T)) {
      const T* p = reinterpret_cast<const T*>(in);
      for (; i + kLanes <= n; i += kLanes) {
        for (int64_t l = 0; l < kLanes; ++l) lanes[l] += p[i + l];
      }
    } else {
      for (; i + kLanes <= n; i += kLanes) {
        for (int64_t l = 0; l < kLanes; ++l) lanes[l] += at(i + l);
      }
    }
    T tail{};
    for (; i < n; ++i) tail += at(i);
    T s = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
          ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
    return s + tail;
  }
  // Pairwise split on block boundaries.
  int64_t half = (n / 2 + kBlock - 1) / kBlock * kBlock;
  return cascade_sum<T>(in, stride, half) + cascade_sum<T>(in + half * stride, stride, n - half);
}

// Runs a reduction whose per-run fold is `run(acc, in, stride, n)` and elementwise combine is
// `combine(out, x)`. Full reductions to one element use per-thread partials.
template <typename T, typename Run, typename Combine>
void reduce_kernel(const TensorIterator& iter, const Run& run, const Combine& combine) {
  auto loop = [&](char** data, const int64_t* strides, int64_t n) {
    if (strides[0] == 0) {
      T* out = reinterpret_cast<T*>(data[0]);
      *out = combine(*out, run(T{}, data[1], strides[1], n));
    } else {
      for (int64_t k = 0; k < n; ++k) {
        T* out = reinterpret_cast<T*>(data[0] + k * strides[0]);
        *out = combine(*out, *reinterpret_cast<const T*>(data[1] + k * strides[1]));
      }
    }
  };
  iter.for_each_reduction_safe(loop);
}

}  // namespace ember
