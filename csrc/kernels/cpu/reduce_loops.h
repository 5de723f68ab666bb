// Loop templates for reductions built by make_reduction (ops/reduce_common.h): the outputs come
// first (zero stride over reduced dims), the input last. See Note [Reduction Driver] below and
// docs/design/reductions.md.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>
#include "kernels/cpu/cpu_level.h"

#include "core/deterministic.h"
#include "core/dtype.h"
#include "core/parallel.h"
#include "dispatch/tensor_iterator.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/reduce_vec.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {

// Independent accumulators per contiguous fold: enough that the compiler vectorises the loop
// and keeps several vector registers in flight (measured: 32 four-byte lanes vectorise where 16
// do not).
template <typename Acc>
constexpr int64_t reduce_lanes() {
  return sizeof(Acc) >= 16 ? 8 : 32;
}

// Tree-combines kLanes accumulators into lanes[0]. Unrolled so each step is one vector add of
// constant width (as a loop, GCC added the lanes one scalar at a time through memory).
template <int64_t kLanes, typename Acc>
inline Acc combine_lanes(Acc* lanes) {
#pragma GCC unroll 8
  for (int64_t w = kLanes / 2; w > 0; w /= 2) {
    for (int64_t l = 0; l < w; ++l) lanes[l] += lanes[l + w];
  }
  return lanes[0];
}

// Lane-wise sum of a contiguous run shorter than a cascade block, combined to one value. Kept
// apart from cascade_sum so the lanes live in registers for the whole call (inside it GCC
// spilled them around the block path; measured 10% of 1000-element row sums).
template <typename Acc, typename In, typename Map>
inline Acc lane_sum(const In* p, int64_t n, const Map& map) {
  constexpr int64_t kLanes = reduce_lanes<Acc>();
  Acc lanes[kLanes];
  for (int64_t l = 0; l < kLanes; ++l) lanes[l] = Acc(0);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] += map(p[i + l]);
  }
  if (i < n) {
    // A zero-padded tail added as a whole vector: added element by element it forces the
    // lanes through the stack.
    Acc tail[kLanes];
    const int64_t rem = n - i;
    for (int64_t l = 0; l < kLanes; ++l) tail[l] = l < rem ? Acc(map(p[i + l])) : Acc(0);
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] += tail[l];
  }
  return combine_lanes<kLanes>(lanes);
}

// Sums map(x) over n elements at `in` (stride in bytes) into an Acc. Contiguous input is cut
// into 1024-element blocks summed by reduce_lanes() independent accumulators; the blocks' lane
// vectors merge pairwise (a binary counter), so the loop vectorises and the rounding error grows
// like log n instead of n. float16 blocks are converted to float first (F16C), so `map` must
// accept float as well as Half for Half input (a generic lambda).
template <typename Acc, typename In = Acc, typename Map>
Acc cascade_sum(const char* in, int64_t stride, int64_t n, const Map& map) {
  constexpr int64_t kLanes = reduce_lanes<Acc>();
  constexpr int64_t kBlock = 1024;
  constexpr int kLevels = 48;  // 2^48 blocks
  static_assert(kBlock % kLanes == 0, "blocks hold whole lane groups");
  if (n < 2 * kLanes) {  // short runs (reductions over a small dim): no lane set-up
    Acc s = Acc(0);
    for (int64_t i = 0; i < n; ++i) s += map(*reinterpret_cast<const In*>(in + i * stride));
    return s;
  }
  const In* p = reinterpret_cast<const In*>(in);
  if (stride != static_cast<int64_t>(sizeof(In))) {
    // Strided runs are rare and memory-bound: a pairwise split keeps them accurate.
    if (n > kBlock) {
      const int64_t half = n / 2;
      return cascade_sum<Acc, In>(in, stride, half, map) +
             cascade_sum<Acc, In>(in + half * stride, stride, n - half, map);
    }
    Acc lanes[kLanes];
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] = Acc(0);
    for (int64_t i = 0; i < n; ++i)
      lanes[i % kLanes] += map(*reinterpret_cast<const In*>(in + i * stride));
    return combine_lanes<kLanes>(lanes);
  }
  if (n < kBlock) return lane_sum<Acc, In>(p, n, map);
  Acc levels[kLevels][kLanes];  // slot k holds the sum of 2^k blocks (see `count`)
  uint64_t count = 0;
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    Acc block[kLanes];
    for (int64_t l = 0; l < kLanes; ++l) block[l] = Acc(0);
    if constexpr (std::is_same_v<In, Half>) {
      float f[kBlock];
      half_bits_to_float_block(reinterpret_cast<const uint16_t*>(p + i), f, kBlock);
      for (int64_t j = 0; j < kBlock; j += kLanes) {
        for (int64_t l = 0; l < kLanes; ++l) block[l] += map(f[j + l]);
      }
    } else {
      for (int64_t j = i; j < i + kBlock; j += kLanes) {
        for (int64_t l = 0; l < kLanes; ++l) block[l] += map(p[j + l]);
      }
    }
    int k = 0;
    for (uint64_t c = count++; c & 1; c >>= 1, ++k) {
      for (int64_t l = 0; l < kLanes; ++l) block[l] = levels[k][l] + block[l];
    }
    for (int64_t l = 0; l < kLanes; ++l) levels[k][l] = block[l];
  }
  Acc lanes[kLanes];
  for (int64_t l = 0; l < kLanes; ++l) lanes[l] = Acc(0);
  for (int k = kLevels - 1; k >= 0; --k) {
    if ((count >> k) & 1) {
      for (int64_t l = 0; l < kLanes; ++l) lanes[l] += levels[k][l];
    }
  }
  return combine_lanes<kLanes>(lanes) + lane_sum<Acc, In>(p + i, n - i, map);
}

template <typename Acc, typename In = Acc>
Acc cascade_sum(const char* in, int64_t stride, int64_t n) {
  return cascade_sum<Acc, In>(in, stride, n, [](auto x) { return convert<Acc>(x); });
}

// Note [Reduction Driver]
// A reduction op is a small struct ("Ops") the driver calls:
//   acc_t identity()                       the value of an empty reduction
//   acc_t fold(acc_t a, in_t x)            adds one element
//   acc_t combine(acc_t a, acc_t b)        merges two partial results (b covers later elements)
//   acc_t fold_run(acc_t a, p, stride, n)  folds a run (ReduceOpsBase: 8-32 lanes, vectorisable)
//   void fold_rows(acc_t* a, row, stride, n)  a[j] = fold(a[j], row[j]) (vectorisable)
//   void write(char* out0, char* out1, acc_t a)  stores the result(s) of one output element
//   kPairwise                              partials are merged pairwise (floating sums)
// run_reduction() splits the iteration space of make_reduction's iterator into kept dims (an
// output moves) and reduced dims, then picks one of three plans:
//   inner:  the input's fastest dim is reduced. Each output folds its contiguous runs; threads
//           take disjoint outputs, or, when there are fewer outputs than threads (a full
//           reduction), split each output's elements and combine per-thread partials.
//   outer:  the fastest dim is kept. Threads take strips of up to ~16 KiB of accumulators along
//           it and fold whole rows into them, so the inner loop is elementwise and vectorises;
//           with too few strips they split the rows instead and combine partial strips.
//   empty:  no element is reduced; every output gets identity().
// Floating sums stay accurate in both plans: runs use cascade_sum, run results and row chunks
// merge through a binary-counter pairwise accumulator.

struct ReduceGeometry {
  static constexpr int kMaxOutputs = 2;
  int noutputs = 1;
  char* in = nullptr;
  char* out[kMaxOutputs] = {nullptr, nullptr};
  // Kept dims (the outputs move along them), innermost first; strides in bytes.
  DimVector keep_sizes, keep_in;
  DimVector keep_out[kMaxOutputs];
  // Reduced dims, innermost first; never empty (a 1-element reduction is one size-1 dim).
  DimVector red_sizes, red_in;
  int64_t n_keep = 1, n_red = 1;
  // True when the input's fastest iteration dim is reduced.
  bool inner = true;
};

// Reads the split of iter's (coalesced, stride-ordered) dims. Outputs are operands
// [0, noutputs), the input operand noutputs.
ReduceGeometry reduce_geometry(const TensorIterator& iter);

namespace reduce_detail {

// A heap array of accumulators (std::vector<bool> has no data()); resize() does not preserve.
template <typename A>
class AccBuffer {
 public:
  AccBuffer() = default;
  explicit AccBuffer(size_t n) { resize(n); }
  AccBuffer(size_t n, const A& value) {
    resize(n);
    std::fill(data(), data() + n, value);
  }
  void resize(size_t n) {
    if (n > size_) data_.reset(new A[n]);
    size_ = std::max(size_, n);
  }
  A* data() { return data_.get(); }
  A& operator[](size_t i) { return data_[i]; }

 private:
  std::unique_ptr<A[]> data_;
  size_t size_ = 0;
};

// A multi-index over `sizes` (innermost first) with the byte offsets of up to three operands.
class Walker {
 public:
  Walker(IntArrayRef sizes, std::initializer_list<const DimVector*> strides) : sizes_(sizes) {
    for (const DimVector* s : strides) strides_[n_++] = s;
    idx_.resize(sizes.size(), 0);
  }
  void seek(int64_t linear) {
    for (int s = 0; s < n_; ++s) off_[s] = 0;
    for (size_t d = 0; d < sizes_.size(); ++d) {
      idx_[d] = linear % sizes_[d];
      linear /= sizes_[d];
      for (int s = 0; s < n_; ++s) off_[s] += idx_[d] * (*strides_[s])[d];
    }
  }
  void next() {
    for (size_t d = 0; d < sizes_.size(); ++d) {
      for (int s = 0; s < n_; ++s) off_[s] += (*strides_[s])[d];
      if (++idx_[d] < sizes_[d]) return;
      for (int s = 0; s < n_; ++s) off_[s] -= (*strides_[s])[d] * sizes_[d];
      idx_[d] = 0;
    }
  }
  int64_t offset(int s) const { return off_[s]; }

 private:
  IntArrayRef sizes_;
  const DimVector* strides_[3] = {};
  int n_ = 0;
  DimVector idx_;
  int64_t off_[3] = {0, 0, 0};
};

// Binary-counter pairwise merge of a stream of partial results: after k adds, slot i holds the
// merge of a 2^i-sized group, so each value takes part in O(log k) merges.
template <typename Ops>
class Pairwise {
 public:
  using A = typename Ops::acc_t;
  explicit Pairwise(const Ops& ops) : ops_(ops) {}
  void add(A x) {
    int k = 0;
    for (uint64_t c = count_++; c & 1; c >>= 1, ++k) x = ops_.combine(levels_[k], x);
    levels_[k] = x;
  }
  A result() const {
    A r = ops_.identity();
    for (int k = 63; k >= 0; --k) {
      if ((count_ >> k) & 1) r = ops_.combine(r, levels_[k]);
    }
    return r;
  }

 private:
  const Ops& ops_;
  A levels_[64];
  uint64_t count_ = 0;
};

inline int64_t chunk_begin(int64_t n, int64_t nchunks, int64_t c) {
  return (n / nchunks) * c + std::min(c, n % nchunks);
}

inline int usable_threads() {
  return in_parallel_region() ? 1 : get_num_threads();
}

// How many pieces a split reduction cuts a range into: one per usable thread, or a fixed count
// under Note [Deterministic Algorithms] (core/deterministic.h), so that the partial results,
// and so the rounding, are the same for every thread count. parallel_for still shares the
// pieces among the threads there are.
inline int split_count() {
  return deterministic_algorithms() ? kDeterministicChunks : usable_threads();
}

template <typename Ops>
void write_out(const Ops& ops, const ReduceGeometry& g, int64_t off0, int64_t off1,
               const typename Ops::acc_t& a) {
  ops.write(g.out[0] + off0, g.noutputs > 1 ? g.out[1] + off1 : nullptr, a);
}

// Folds reduced elements [r0, r1) (linear over the reduced dims) of the output at `base`.
template <typename Ops>
typename Ops::acc_t reduce_range(const Ops& ops, const ReduceGeometry& g, const char* base,
                                 int64_t r0, int64_t r1) {
  using A = typename Ops::acc_t;
  const int64_t run = g.red_sizes[0];
  const int64_t s0 = g.red_in[0];
  if (g.red_sizes.size() == 1) return ops.fold_run(ops.identity(), base + r0 * s0, s0, r1 - r0);
  DimVector outer_sizes(IntArrayRef(g.red_sizes.data() + 1, g.red_sizes.size() - 1));
  DimVector outer_in(IntArrayRef(g.red_in.data() + 1, g.red_in.size() - 1));
  Walker w(outer_sizes, {&outer_in});
  w.seek(r0 / run);
  int64_t i0 = r0 % run;
  Pairwise<Ops> pw(ops);
  A acc = ops.identity();
  for (int64_t pos = r0; pos < r1;) {
    const int64_t n = std::min(run - i0, r1 - pos);
    const char* p = base + w.offset(0) + i0 * s0;
    if constexpr (Ops::kPairwise) {
      pw.add(ops.fold_run(ops.identity(), p, s0, n));
    } else {
      acc = ops.fold_run(acc, p, s0, n);
    }
    pos += n;
    i0 = 0;
    w.next();
  }
  if constexpr (Ops::kPairwise) return pw.result();
  return acc;
}

template <typename Ops>
void reduce_inner(const Ops& ops, const ReduceGeometry& g) {
  using A = typename Ops::acc_t;
  const int nt = split_count();
  const bool split_each = nt > 1 && g.n_keep < 4 * nt && g.n_red >= 2 * kGrainSize;
  if (split_each) {
    // Few long reductions (a full reduction has one): threads split each output's elements.
    const int64_t nchunks = std::min<int64_t>(nt, g.n_red / kGrainSize);
    AccBuffer<A> partials(static_cast<size_t>(nchunks));
    Walker w(g.keep_sizes, {&g.keep_in, &g.keep_out[0], &g.keep_out[1]});
    w.seek(0);
    for (int64_t k = 0; k < g.n_keep; ++k, w.next()) {
      const char* base = g.in + w.offset(0);
      parallel_for(0, nchunks, 1, [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c) {
          partials[c] = reduce_range(ops, g, base, chunk_begin(g.n_red, nchunks, c),
                                     chunk_begin(g.n_red, nchunks, c + 1));
        }
      });
      A acc = partials[0];
      for (int64_t c = 1; c < nchunks; ++c) acc = ops.combine(acc, partials[c]);
      write_out(ops, g, w.offset(1), w.offset(2), acc);
    }
    return;
  }
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, g.n_red));
  if (g.red_sizes.size() == 1 && g.keep_sizes.size() == 1) {
    // One reduced dim and one kept dim (row sums of a matrix): plain strided pointers.
    const int64_t n = g.red_sizes[0], s_red = g.red_in[0], s_in = g.keep_in[0];
    const int64_t s_o0 = g.keep_out[0][0], s_o1 = g.keep_out[1][0];
    parallel_for(0, g.n_keep, grain, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        write_out(ops, g, k * s_o0, k * s_o1,
                  ops.fold_run(ops.identity(), g.in + k * s_in, s_red, n));
      }
    });
    return;
  }
  parallel_for(0, g.n_keep, grain, [&](int64_t b, int64_t e) {
    Walker w(g.keep_sizes, {&g.keep_in, &g.keep_out[0], &g.keep_out[1]});
    w.seek(b);
    for (int64_t k = b; k < e; ++k, w.next()) {
      write_out(ops, g, w.offset(1), w.offset(2),
                reduce_range(ops, g, g.in + w.offset(0), 0, g.n_red));
    }
  });
}

// Folds reduced rows [r0, r1) of one strip (len elements along keep dim 0 at `base`, stride si)
// into acc[0, len), which the caller has set to identity. Floating sums fold 64-row chunks and
// merge the chunks pairwise.
template <typename Ops>
void fold_strip(const Ops& ops, const ReduceGeometry& g, const char* base, int64_t si, int64_t len,
                typename Ops::acc_t* acc, int64_t r0, int64_t r1,
                AccBuffer<typename Ops::acc_t>& scratch) {
  using A = typename Ops::acc_t;
  constexpr int64_t kChunkRows = 64;
  Walker w(g.red_sizes, {&g.red_in});
  w.seek(r0);
  if (!Ops::kPairwise || r1 - r0 <= kChunkRows) {
    for (int64_t r = r0; r < r1; ++r, w.next()) ops.fold_rows(acc, base + w.offset(0), si, len);
    return;
  }
  // scratch: [chunk accumulator | level 0 | level 1 | ...], each len wide.
  int levels = 1;
  while ((int64_t(1) << levels) * kChunkRows < (r1 - r0)) ++levels;
  scratch.resize(static_cast<size_t>((levels + 2) * len));
  A* chunk = scratch.data();
  auto level = [&](int k) { return scratch.data() + (k + 1) * len; };
  uint64_t count = 0;
  for (int64_t r = r0; r < r1;) {
    const int64_t rows = std::min(kChunkRows, r1 - r);
    std::fill(chunk, chunk + len, ops.identity());
    for (int64_t i = 0; i < rows; ++i, w.next()) ops.fold_rows(chunk, base + w.offset(0), si, len);
    r += rows;
    int k = 0;
    for (uint64_t c = count++; c & 1; c >>= 1, ++k) {
      A* lv = level(k);
      for (int64_t j = 0; j < len; ++j) chunk[j] = ops.combine(lv[j], chunk[j]);
    }
    std::copy(chunk, chunk + len, level(k));
  }
  for (int k = levels + 1; k >= 0; --k) {
    if ((count >> k) & 1) {
      A* lv = level(k);
      for (int64_t j = 0; j < len; ++j) acc[j] = ops.combine(acc[j], lv[j]);
    }
  }
}

// How the outer plan splits keep dim 0 (length m) into strips of `width` accumulators.
struct StripPlan {
  int64_t m = 0, n_outer = 0, width = 0, nstrips = 0, ntasks = 0;
  bool big = false;         // worth running on several threads
  bool split_rows = false;  // too few strips to share: threads split the reduced rows instead
  DimVector outer_sizes, outer_in, outer_o0, outer_o1;  // keep dims 1.. (strides in bytes)
};

// Strips hold at most ~16 KiB of accumulators; with threads to feed, there are enough strips
// that each thread gets an equal share.
StripPlan plan_strips(const ReduceGeometry& g, int64_t acc_bytes);

template <typename Ops>
void reduce_outer(const Ops& ops, const ReduceGeometry& g) {
  using A = typename Ops::acc_t;
  const StripPlan sp = plan_strips(g, sizeof(A));
  const int64_t m = sp.m, si = g.keep_in[0], width = sp.width, nstrips = sp.nstrips;
  const int64_t so0 = g.keep_out[0][0], so1 = g.keep_out[1][0];
  auto write_strip = [&](int64_t off0, int64_t off1, int64_t j0, int64_t len, const A* acc) {
    for (int64_t j = 0; j < len; ++j) {
      write_out(ops, g, off0 + (j0 + j) * so0, off1 + (j0 + j) * so1, acc[j]);
    }
  };

  if (sp.split_rows) {
    const int64_t nchunks = std::min<int64_t>(split_count(), g.n_red);
    AccBuffer<A> partials(static_cast<size_t>(nchunks * g.n_keep), ops.identity());
    parallel_for(0, nchunks, 1, [&](int64_t b, int64_t e) {
      AccBuffer<A> scratch;
      for (int64_t c = b; c < e; ++c) {
        Walker w(sp.outer_sizes, {&sp.outer_in});
        w.seek(0);
        for (int64_t o = 0; o < sp.n_outer; ++o, w.next()) {
          fold_strip(ops, g, g.in + w.offset(0), si, m, partials.data() + c * g.n_keep + o * m,
                     chunk_begin(g.n_red, nchunks, c), chunk_begin(g.n_red, nchunks, c + 1),
                     scratch);
        }
      }
    });
    for (int64_t c = 1; c < nchunks; ++c) {
      for (int64_t k = 0; k < g.n_keep; ++k) {
        partials[k] = ops.combine(partials[k], partials[c * g.n_keep + k]);
      }
    }
    Walker w(sp.outer_sizes, {&sp.outer_o0, &sp.outer_o1});
    w.seek(0);
    for (int64_t o = 0; o < sp.n_outer; ++o, w.next()) {
      write_strip(w.offset(0), w.offset(1), 0, m, partials.data() + o * m);
    }
    return;
  }

  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, width * g.n_red));
  parallel_for(0, sp.ntasks, grain, [&](int64_t b, int64_t e) {
    AccBuffer<A> acc(static_cast<size_t>(width));
    AccBuffer<A> scratch;
    Walker w(sp.outer_sizes, {&sp.outer_in, &sp.outer_o0, &sp.outer_o1});
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / nstrips, j0 = (t % nstrips) * width;
      const int64_t len = std::min(width, m - j0);
      w.seek(o);
      std::fill(acc.data(), acc.data() + len, ops.identity());
      fold_strip(ops, g, g.in + w.offset(0) + j0 * si, si, len, acc.data(), 0, g.n_red, scratch);
      write_strip(w.offset(1), w.offset(2), j0, len, acc.data());
    }
  });
}

}  // namespace reduce_detail

// Runs a reduction described by `ops` over make_reduction's iterator (Note [Reduction Driver]).
template <typename Ops>
void run_reduction(const TensorIterator& iter, const Ops& ops) {
  const ReduceGeometry g = reduce_geometry(iter);
  if (g.n_keep == 0) return;
  if (g.n_red == 0) {
    reduce_detail::Walker w(g.keep_sizes, {&g.keep_out[0], &g.keep_out[1]});
    w.seek(0);
    for (int64_t k = 0; k < g.n_keep; ++k, w.next()) {
      reduce_detail::write_out(ops, g, w.offset(0), w.offset(1), ops.identity());
    }
    return;
  }
  if (g.inner) {
    reduce_detail::reduce_inner(ops, g);
  } else {
    reduce_detail::reduce_outer(ops, g);
  }
}

// Default fold_run / fold_rows / write for an Ops struct `Derived` that defines identity, fold,
// combine and project (CRTP). kLanes independent accumulators make the contiguous fold
// vectorisable for select-style folds (max, min, and/or) that the compiler cannot reassociate.
template <typename Derived, typename In, typename Acc, typename Out>
struct ReduceOpsBase {
  using in_t = In;
  using acc_t = Acc;
  using out_t = Out;
  static constexpr bool kPairwise = false;
  static constexpr int64_t kLanes = reduce_lanes<Acc>();

  const Derived& self() const { return static_cast<const Derived&>(*this); }

  Acc fold_run(Acc acc, const char* p, int64_t stride, int64_t n) const {
    const Derived& d = self();
    if (stride == static_cast<int64_t>(sizeof(In)) && n >= 2 * kLanes) {
      const In* x = reinterpret_cast<const In*>(p);
      Acc lanes[kLanes];
      for (int64_t l = 0; l < kLanes; ++l) lanes[l] = d.identity();
      const int64_t body = n / kLanes * kLanes;
      for (int64_t i = 0; i < body; i += kLanes) {
        for (int64_t l = 0; l < kLanes; ++l) lanes[l] = d.fold(lanes[l], x[i + l]);
      }
      for (int64_t l = 0; l < kLanes; ++l) acc = d.combine(acc, lanes[l]);
      for (int64_t i = body; i < n; ++i) acc = d.fold(acc, x[i]);
      return acc;
    }
    for (int64_t i = 0; i < n; ++i) acc = d.fold(acc, *reinterpret_cast<const In*>(p + i * stride));
    return acc;
  }

  void fold_rows(Acc* __restrict acc, const char* row, int64_t stride, int64_t n) const {
    const Derived& d = self();
    if (stride == static_cast<int64_t>(sizeof(In))) {
      const In* __restrict x = reinterpret_cast<const In*>(row);
      for (int64_t j = 0; j < n; ++j) acc[j] = d.fold(acc[j], x[j]);
    } else {
      for (int64_t j = 0; j < n; ++j)
        acc[j] = d.fold(acc[j], *reinterpret_cast<const In*>(row + j * stride));
    }
  }

  void write(char* out0, char* /*out1*/, const Acc& a) const {
    *reinterpret_cast<Out*>(out0) = self().project(a);
  }
};

// The one-output iterator loop used before the driver existed: out op= in elementwise, with
// runs folded by `run`. Kept for simple kernels that need no planning.
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

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
