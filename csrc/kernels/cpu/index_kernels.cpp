// CPU kernels for the gather side of indexing (getitem, gather, take, index_select, ...) and
// for index bounds checks. Data movement is instantiated per element size, not per dtype.
#include <limits>
#include <mutex>

#include "core/parallel.h"
#include "kernels/cpu/index_loops.h"
#include "ops/indexing_engine.h"

namespace ember {
namespace {

template <typename E>
void gather_loop(TensorIterator& iter, const IndexOffsets& offs) {
  iter.for_each([&](char** data, const int64_t* st, int64_t len) {
    char* out = data[0];
    const char* src = data[1];
    const int64_t so = st[0], ss = st[1];
    if (offs.constant(st + 2)) {
      // One offset for the whole inner loop: a row copy (memcpy when both sides are dense).
      const char* base = src + offs.at(data + 2, st + 2, 0);
      if (so == sizeof(E) && ss == sizeof(E)) {
        std::memcpy(out, base, len * sizeof(E));
        return;
      }
      for (int64_t k = 0; k < len; ++k) copy_word<E>(out + k * so, base + k * ss);
      return;
    }
    if (offs.n == 1) {  // gather, index_select, take and single-tensor getitem
      const char* ip = data[2];
      const int64_t is = st[2], size = offs.sizes[0], stride = offs.strides[0];
      for (int64_t k = 0; k < len; ++k) {
        int64_t i = *reinterpret_cast<const int64_t*>(ip + k * is);
        if (i < 0) i += size;
        copy_word<E>(out + k * so, src + k * ss + i * stride);
      }
      return;
    }
    for (int64_t k = 0; k < len; ++k) {
      copy_word<E>(out + k * so, src + k * ss + offs.at(data + 2, st + 2, k));
    }
  });
}

void index_gather_kernel(TensorIterator& iter, IntArrayRef sizes, IntArrayRef byte_strides) {
  IndexOffsets offs{static_cast<int>(sizes.size()), sizes.data(), byte_strides.data()};
  dispatch_word(element_size(iter.dtype(1)), [&](auto tag) {
    using E = typename decltype(tag)::type;
    gather_loop<E>(iter, offs);
  });
}

// Finds a value outside [lo, hi). Chunks run in parallel; the chunk that starts first reports,
// so the value named in the error does not depend on thread timing.
bool index_bounds_kernel(TensorIterator& iter, int64_t lo, int64_t hi, int64_t* bad) {
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  std::mutex mu;
  int64_t first_chunk = std::numeric_limits<int64_t>::max();
  int64_t value = 0;
  auto scan = [&](int64_t begin, int64_t end) {
    int64_t found = 0;
    bool any = false;
    iter.serial_for_each(
        [&](char** data, const int64_t* st, int64_t n) {
          if (any) return;
          const char* p = data[0];
          // In range iff (v - lo) as unsigned < span; one compare per element, vectorisable.
          bool hit = false;
          for (int64_t k = 0; k < n; ++k) {
            int64_t v = *reinterpret_cast<const int64_t*>(p + k * st[0]);
            hit |= static_cast<uint64_t>(v) - static_cast<uint64_t>(lo) >= span;
          }
          if (!hit) return;
          for (int64_t k = 0; k < n; ++k) {
            int64_t v = *reinterpret_cast<const int64_t*>(p + k * st[0]);
            if (static_cast<uint64_t>(v) - static_cast<uint64_t>(lo) >= span) {
              found = v;
              any = true;
              return;
            }
          }
        },
        begin, end);
    if (!any) return;
    std::lock_guard<std::mutex> lock(mu);
    if (begin < first_chunk) {
      first_chunk = begin;
      value = found;
    }
  };
  if (iter.numel() < kGrainSize) {
    scan(0, iter.numel());
  } else {
    parallel_for(0, iter.numel(), kGrainSize, scan);
  }
  if (first_chunk == std::numeric_limits<int64_t>::max()) return false;
  *bad = value;
  return true;
}

}  // namespace

EMBER_REGISTER_KERNEL(index_gather_stub, CPU, index_gather_kernel);
EMBER_REGISTER_KERNEL(index_bounds_stub, CPU, index_bounds_kernel);

}  // namespace ember
