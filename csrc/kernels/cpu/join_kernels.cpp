// Byte-moving kernels of the joining family: they never look at values, so one instantiation
// per element size serves every dtype.
#include <algorithm>
#include <cstring>

#include "core/parallel.h"
#include "kernels/join_stubs.h"
#include "kernels/shape_util_stubs.h"

namespace ember {
namespace native {
namespace {

void gather_slices_kernel(char* dst, const char* src, int64_t outer, int64_t src_rows,
                          const int64_t* index, int64_t n, int64_t row_bytes) {
  const int64_t rows = outer * n;
  const int64_t grain = std::max<int64_t>(1, kGrainSize * 4 / std::max<int64_t>(row_bytes, 1));
  parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t o = r / n, i = r % n;
      std::memcpy(dst + r * row_bytes, src + (o * src_rows + index[i]) * row_bytes, row_bytes);
    }
  });
}

void cat_contiguous_kernel(char* out, int64_t outer, const std::vector<const char*>& srcs,
                           const std::vector<int64_t>& chunk_bytes) {
  int64_t row_bytes = 0;
  for (int64_t c : chunk_bytes) row_bytes += c;
  if (row_bytes == 0) return;
  const size_t n = srcs.size();
  const int64_t grain = std::max<int64_t>(1, kGrainSize * 4 / row_bytes);
  parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      char* dst = out + r * row_bytes;
      for (size_t i = 0; i < n; ++i) {
        std::memcpy(dst, srcs[i] + r * chunk_bytes[i], chunk_bytes[i]);
        dst += chunk_bytes[i];
      }
    }
  });
}

template <size_t kSize>
struct Elem {
  unsigned char b[kSize];
};

// Walks every (batch, row) of the last two dims; keeps or zeroes each element of the row.
template <size_t kSize>
void tri_impl(const Tensor& out, const Tensor& in, int64_t diagonal, bool lower) {
  using E = Elem<kSize>;
  const int64_t nd = out.dim();
  const int64_t rows = out.size(nd - 2), cols = out.size(nd - 1);
  if (out.numel() == 0) return;
  const int64_t batch = out.numel() / (rows * cols);
  const bool inplace =
      out.is_same(in) || (out.data_ptr() == in.data_ptr() && out.strides().equals(in.strides()));
  char* obase = static_cast<char*>(out.data_ptr());
  const char* ibase = static_cast<const char*>(in.data_ptr());
  const int64_t ors = out.stride(nd - 2) * kSize, ocs = out.stride(nd - 1) * kSize;
  const int64_t irs = in.stride(nd - 2) * kSize, ics = in.stride(nd - 1) * kSize;
  const int64_t total = batch * rows;
  parallel_for(0, total, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(cols, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t r = b; r < e; ++r) {
                   int64_t bi = r / rows, i = r % rows;
                   // Offsets of batch bi over the leading dims.
                   int64_t ooff = 0, ioff = 0;
                   for (int64_t d = nd - 3; d >= 0; --d) {
                     int64_t idx = bi % out.size(d);
                     bi /= out.size(d);
                     ooff += idx * out.stride(d);
                     ioff += idx * in.stride(d);
                   }
                   char* orow = obase + ooff * int64_t(kSize) + i * ors;
                   const char* irow = ibase + ioff * int64_t(kSize) + i * irs;
                   // Columns j kept: lower: j <= i + diagonal; upper: j >= i + diagonal.
                   int64_t split =
                       std::clamp<int64_t>(lower ? i + diagonal + 1 : i + diagonal, 0, cols);
                   int64_t keep_b = lower ? 0 : split, keep_e = lower ? split : cols;
                   for (int64_t j = 0; j < cols; ++j) {
                     char* o = orow + j * ocs;
                     if (j >= keep_b && j < keep_e) {
                       if (!inplace)
                         *reinterpret_cast<E*>(o) = *reinterpret_cast<const E*>(irow + j * ics);
                     } else {
                       std::memset(o, 0, kSize);
                     }
                   }
                 }
               });
}

void tri_kernel(const Tensor& out, const Tensor& in, int64_t diagonal, bool lower) {
  switch (out.itemsize()) {
    case 1:
      return tri_impl<1>(out, in, diagonal, lower);
    case 2:
      return tri_impl<2>(out, in, diagonal, lower);
    case 4:
      return tri_impl<4>(out, in, diagonal, lower);
    case 8:
      return tri_impl<8>(out, in, diagonal, lower);
    default:
      return tri_impl<16>(out, in, diagonal, lower);
  }
}

}  // namespace

EMBER_REGISTER_KERNEL(gather_slices_stub, CPU, gather_slices_kernel);
EMBER_REGISTER_KERNEL(cat_contiguous_stub, CPU, cat_contiguous_kernel);
EMBER_REGISTER_KERNEL(tri_stub, CPU, tri_kernel);

}  // namespace native
}  // namespace ember
