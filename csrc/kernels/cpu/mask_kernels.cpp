// CPU kernels for masks: masked_fill, counting trues, masked_select compaction and nonzero.
// Compaction runs in two parallel passes over fixed chunks: count the trues of each chunk, take
// an exclusive prefix sum, then every chunk writes its own output range.
#include <algorithm>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/index_loops.h"
#include "kernels/indexing_stubs.h"

namespace ember {
namespace native {
namespace {

// m ? v : cur computed with bit masks, so the compiler emits no branch (random masks would
// mispredict half the time) and can vectorise the loop.
template <typename E>
inline E blend(E cur, E v, uint8_t m) {
  const E sel = static_cast<E>(-static_cast<E>(m != 0));
  return static_cast<E>((v & sel) | (cur & static_cast<E>(~sel)));
}
inline Bytes16 blend(Bytes16 cur, Bytes16 v, uint8_t m) {
  return {blend<uint64_t>(cur.lo, v.lo, m), blend<uint64_t>(cur.hi, v.hi, m)};
}

template <typename E>
void masked_fill_loop(TensorIterator& iter, const void* value) {
  E v;
  std::memcpy(&v, value, sizeof(E));
  iter.for_each([&](char** data, const int64_t* st, int64_t n) {
    char* out = data[0];
    const char* mask = data[1];
    if (st[0] == sizeof(E) && st[1] == 1) {
      E* o = reinterpret_cast<E*>(out);
      const uint8_t* m = reinterpret_cast<const uint8_t*>(mask);
      for (int64_t k = 0; k < n; ++k) o[k] = blend(o[k], v, m[k]);
      return;
    }
    for (int64_t k = 0; k < n; ++k) {
      if (*reinterpret_cast<const bool*>(mask + k * st[1])) {
        std::memcpy(out + k * st[0], &v, sizeof(E));
      }
    }
  });
}

void masked_fill_kernel(TensorIterator& iter, const void* value) {
  dispatch_word(element_size(iter.dtype(0)), [&](auto tag) {
    using E = typename decltype(tag)::type;
    masked_fill_loop<E>(iter, value);
  });
}

int64_t count_range(const uint8_t* m, int64_t begin, int64_t end) {
  int64_t c = 0;
  for (int64_t i = begin; i < end; ++i) c += m[i];  // bools are stored as 0 / 1
  return c;
}

// Fixed chunk boundaries shared by both passes.
struct Chunks {
  int64_t n, count;
  explicit Chunks(int64_t numel) : n(numel) {
    count = numel < kGrainSize ? 1
                               : std::min<int64_t>((numel + kGrainSize - 1) / kGrainSize,
                                                   int64_t(get_num_threads()) * 4);
    count = std::max<int64_t>(count, 1);
  }
  int64_t begin(int64_t c) const { return n / count * c + std::min(c, n % count); }
};

// Exclusive prefix of per-chunk true counts.
std::vector<int64_t> chunk_offsets(const uint8_t* m, const Chunks& ch) {
  std::vector<int64_t> off(ch.count + 1, 0);
  parallel_for(0, ch.count, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) off[c + 1] = count_range(m, ch.begin(c), ch.begin(c + 1));
  });
  for (int64_t c = 0; c < ch.count; ++c) off[c + 1] += off[c];
  return off;
}

int64_t count_true_kernel(const Tensor& mask) {
  const uint8_t* m = static_cast<const uint8_t*>(mask.data_ptr());
  const int64_t n = mask.numel();
  if (n < kGrainSize) return count_range(m, 0, n);
  return chunk_offsets(m, Chunks(n)).back();
}

void masked_select_kernel(const Tensor& self, const Tensor& mask, const Tensor& out) {
  const uint8_t* m = static_cast<const uint8_t*>(mask.data_ptr());
  const Chunks ch(mask.numel());
  std::vector<int64_t> off =
      ch.count == 1 ? std::vector<int64_t>{0, out.numel()} : chunk_offsets(m, ch);
  dispatch_word(self.itemsize(), [&](auto tag) {
    using E = typename decltype(tag)::type;
    const char* src = static_cast<const char*>(self.data_ptr());
    char* dst = static_cast<char*>(out.data_ptr());
    parallel_for(0, ch.count, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) {
        // Branch-free compaction: every element is copied to the next free slot, which only
        // advances on a true; the slot past this chunk's range is never written.
        int64_t pos = off[c];
        const int64_t limit = off[c + 1];
        for (int64_t i = ch.begin(c); i < ch.begin(c + 1); ++i) {
          if (pos < limit) copy_word<E>(dst + pos * sizeof(E), src + i * sizeof(E));
          pos += m[i];
        }
      }
    });
  });
}

void nonzero_kernel(const Tensor& mask, IntArrayRef shape, const Tensor& out) {
  if (mask.numel() == 0) return;
  const uint8_t* m = static_cast<const uint8_t*>(mask.data_ptr());
  const int64_t nd = static_cast<int64_t>(shape.size());
  const Chunks ch(mask.numel());
  std::vector<int64_t> off =
      ch.count == 1 ? std::vector<int64_t>{0, out.size(0)} : chunk_offsets(m, ch);
  int64_t* dst = out.data<int64_t>();
  parallel_for(0, ch.count, 1, [&](int64_t b, int64_t e) {
    DimVector coord(nd, 0);
    for (int64_t c = b; c < e; ++c) {
      const int64_t begin = ch.begin(c), end = ch.begin(c + 1);
      int64_t rem = begin;
      for (int64_t d = nd - 1; d >= 0; --d) {
        coord[d] = rem % shape[d];
        rem /= shape[d];
      }
      // Branch-free as in masked_select: write every coordinate, advance on a true.
      int64_t* row = dst + off[c] * nd;
      int64_t* const limit = dst + off[c + 1] * nd;
      for (int64_t i = begin; i < end; ++i) {
        if (row < limit) {
          for (int64_t d = 0; d < nd; ++d) row[d] = coord[d];
        }
        row += m[i] * nd;
        for (int64_t d = nd - 1; d >= 0; --d) {  // odometer step to element i + 1
          if (++coord[d] < shape[d]) break;
          coord[d] = 0;
        }
      }
    }
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(masked_fill_stub, CPU, masked_fill_kernel);
EMBER_REGISTER_KERNEL(count_true_stub, CPU, count_true_kernel);
EMBER_REGISTER_KERNEL(masked_select_stub, CPU, masked_select_kernel);
EMBER_REGISTER_KERNEL(nonzero_stub, CPU, nonzero_kernel);

}  // namespace native
}  // namespace ember
