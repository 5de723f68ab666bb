// Runs a body once per "row" of one or more same-shaped tensors, a row being the elements along
// one dim: for_each_row(shape, dim, {&a, &b}, body) calls body(row_ptrs, row_strides) with each
// tensor's first row element and its stride along dim, in parallel over rows.
#pragma once
#include <array>
#include <cstdint>
#include "kernels/cpu/cpu_level.h"

#include "core/parallel.h"
#include "core/tensor.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {

template <size_t N, typename F>
void for_each_row(IntArrayRef shape, int64_t dim, const std::array<const Tensor*, N>& tensors,
                  int64_t row_len, const F& body) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  int64_t rows = 1;
  for (int64_t d = 0; d < nd; ++d) {
    if (d != dim) rows *= shape[d];
  }
  if (rows == 0) return;
  std::array<char*, N> base;
  std::array<int64_t, N> row_stride;
  std::array<int64_t, N> isz;
  for (size_t i = 0; i < N; ++i) {
    base[i] = static_cast<char*>(tensors[i]->data_ptr());
    isz[i] = static_cast<int64_t>(tensors[i]->itemsize());
    row_stride[i] = nd > 0 ? tensors[i]->stride(dim) * isz[i] : 0;
  }
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(row_len, 1) / 4);
  parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
    std::array<char*, N> ptr;
    for (int64_t r = b; r < e; ++r) {
      int64_t rem = r;
      for (size_t i = 0; i < N; ++i) ptr[i] = base[i];
      for (int64_t d = nd - 1; d >= 0; --d) {
        if (d == dim) continue;
        const int64_t idx = rem % shape[d];
        rem /= shape[d];
        for (size_t i = 0; i < N; ++i) ptr[i] += idx * tensors[i]->stride(d) * isz[i];
      }
      body(ptr, row_stride);
    }
  });
}

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
