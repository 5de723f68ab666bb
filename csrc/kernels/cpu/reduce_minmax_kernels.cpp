// amax / amin / aminmax, and the index reductions argmax / argmin / max(dim) / min(dim).
#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/reduce_ops.h"
#include "kernels/reduce_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

// (min, max) in one pass; writes min to output 0 and max to output 1.
template <typename T>
struct MinMaxOps : ReduceOpsBase<MinMaxOps<T>, T, std::pair<acc_type<T>, acc_type<T>>, T> {
  using A = acc_type<T>;
  using Acc = std::pair<A, A>;
  ExtremumOps<T, false> lo;
  ExtremumOps<T, true> hi;
  Acc identity() const { return {lo.identity(), hi.identity()}; }
  Acc fold(Acc a, T x) const { return {lo.fold(a.first, x), hi.fold(a.second, x)}; }
  Acc combine(Acc a, Acc b) const {
    return {lo.combine(a.first, b.first), hi.combine(a.second, b.second)};
  }
  Acc fold_run(Acc a, const char* p, int64_t stride, int64_t n) const {
    return {lo.fold_run(a.first, p, stride, n), hi.fold_run(a.second, p, stride, n)};
  }
  void write(char* out0, char* out1, const Acc& a) const {
    *reinterpret_cast<T*>(out0) = static_cast<T>(a.first);
    *reinterpret_cast<T*>(out1) = static_cast<T>(a.second);
  }
};

void minmax_kernel(TensorIterator& iter, MinMaxKind kind) {
  dispatch_dtype<kRealAndBool>(iter.dtype(iter.noutputs()), "amax", [&](auto tag) {
    using T = typename decltype(tag)::type;
    switch (kind) {
      case MinMaxKind::Max:
        run_reduction(iter, ExtremumOps<T, true>{});
        break;
      case MinMaxKind::Min:
        run_reduction(iter, ExtremumOps<T, false>{});
        break;
      case MinMaxKind::MinMax:
        run_reduction(iter, MinMaxOps<T>{});
        break;
    }
  });
}

// ---- index reductions --------------------------------------------------------------------

template <typename T, bool IsMax>
struct ArgRules {
  using A = acc_type<T>;
  // Whether x replaces the current best b: strictly better, or the first NaN. Ties keep the
  // earlier element, so the first occurrence wins.
  static bool better(A x, A b) {
    if constexpr (std::is_floating_point_v<A>) {
      return (IsMax ? x > b : x < b) || (x != x && b == b);
    } else {
      return IsMax ? x > b : x < b;
    }
  }
};

template <typename T>
struct ArgResult {
  acc_type<T> value;
  int64_t index;
};

// The best element of a run and its index (relative to the run).
template <typename T, bool IsMax>
ArgResult<T> arg_run(const char* p, int64_t stride, int64_t n) {
  using A = acc_type<T>;
  using Rules = ArgRules<T, IsMax>;
  if (stride == static_cast<int64_t>(sizeof(T)) && n >= 64) {
    // One vectorised pass computes each block's extreme (NaN-propagating) and keeps the first
    // block holding the best one; that block (still in cache) is then searched for it.
    constexpr int64_t kBlock = 2048;
    const T* x = reinterpret_cast<const T*>(p);
    ExtremumOps<T, IsMax> ext;
    A best = ext.identity();
    int64_t best_block = -1;
    for (int64_t b = 0; b < n; b += kBlock) {
      const A m = ext.fold_run(ext.identity(), p + b * stride, stride, std::min(kBlock, n - b));
      if (best_block < 0 || Rules::better(m, best)) {
        best = m;
        best_block = b;
      }
    }
    const int64_t e = std::min(n, best_block + kBlock);
    if constexpr (std::is_floating_point_v<A>) {
      if (best != best) {
        for (int64_t i = best_block; i < e; ++i) {
          if (is_nan_value(x[i])) return {best, i};
        }
      }
    }
    for (int64_t i = best_block; i < e; ++i) {
      if (load<A>(x[i]) == best) return {best, i};
    }
    return {best, best_block};  // unreachable: best is one of the block's elements
  }
  A best = load<A>(*reinterpret_cast<const T*>(p));
  int64_t idx = 0;
  for (int64_t i = 1; i < n; ++i) {
    const A v = load<A>(*reinterpret_cast<const T*>(p + i * stride));
    if (Rules::better(v, best)) {
      best = v;
      idx = i;
    }
  }
  return {best, idx};
}

// Folds rows [r0, r1) of a strip into (vals, idx); r0 == 0 initialises from the first row.
template <typename T, bool IsMax>
void arg_rows(const char* base, int64_t row_stride, int64_t si, int64_t len, int64_t r0, int64_t r1,
              acc_type<T>* __restrict vals, int64_t* __restrict idx) {
  using A = acc_type<T>;
  for (int64_t r = r0; r < r1; ++r) {
    const char* row = base + r * row_stride;
    if (r == r0) {
      for (int64_t j = 0; j < len; ++j) {
        vals[j] = load<A>(*reinterpret_cast<const T*>(row + j * si));
        idx[j] = r;
      }
      continue;
    }
    if (si == static_cast<int64_t>(sizeof(T))) {
      const T* __restrict x = reinterpret_cast<const T*>(row);
      for (int64_t j = 0; j < len; ++j) {
        const A v = load<A>(x[j]);
        const bool take = ArgRules<T, IsMax>::better(v, vals[j]);
        vals[j] = take ? v : vals[j];
        idx[j] = take ? r : idx[j];
      }
    } else {
      for (int64_t j = 0; j < len; ++j) {
        const A v = load<A>(*reinterpret_cast<const T*>(row + j * si));
        if (ArgRules<T, IsMax>::better(v, vals[j])) {
          vals[j] = v;
          idx[j] = r;
        }
      }
    }
  }
}

template <typename T, bool IsMax>
void arg_reduce_impl(TensorIterator& iter) {
  using A = acc_type<T>;
  using Rules = ArgRules<T, IsMax>;
  const ReduceGeometry g = reduce_geometry(iter);
  if (g.n_keep == 0) return;
  EMBER_CHECK(g.red_sizes.size() == 1 && g.n_red > 0, "[", iter.name(),
              "] index reductions take one non-empty dim");
  const bool has_values = g.noutputs == 2;
  const int io = g.noutputs - 1;  // the indices output
  const int64_t R = g.n_red, rs = g.red_in[0];
  auto store = [&](int64_t off_v, int64_t off_i, A v, int64_t i) {
    if (has_values) *reinterpret_cast<T*>(g.out[0] + off_v) = static_cast<T>(v);
    *reinterpret_cast<int64_t*>(g.out[io] + off_i) = i;
  };
  const int nt = reduce_detail::usable_threads();
  using reduce_detail::Walker;

  if (g.inner) {
    Walker w0(g.keep_sizes, {&g.keep_in, &g.keep_out[0], &g.keep_out[io]});
    if (nt > 1 && g.n_keep < 4 * nt && R >= 2 * kGrainSize) {
      // Few long runs (argmax over everything): threads split each run and the earliest best
      // partial result wins.
      const int64_t nchunks = std::min<int64_t>(nt, R / kGrainSize);
      std::vector<ArgResult<T>> parts(nchunks);
      w0.seek(0);
      for (int64_t k = 0; k < g.n_keep; ++k, w0.next()) {
        const char* base = g.in + w0.offset(0);
        parallel_for(0, nchunks, 1, [&](int64_t b, int64_t e) {
          for (int64_t c = b; c < e; ++c) {
            const int64_t lo = reduce_detail::chunk_begin(R, nchunks, c);
            const int64_t hi = reduce_detail::chunk_begin(R, nchunks, c + 1);
            parts[c] = arg_run<T, IsMax>(base + lo * rs, rs, hi - lo);
            parts[c].index += lo;
          }
        });
        ArgResult<T> best = parts[0];
        for (int64_t c = 1; c < nchunks; ++c) {
          if (Rules::better(parts[c].value, best.value)) best = parts[c];
        }
        store(w0.offset(1), w0.offset(2), best.value, best.index);
      }
      return;
    }
    const int64_t grain = std::max<int64_t>(1, kGrainSize / R);
    parallel_for(0, g.n_keep, grain, [&](int64_t b, int64_t e) {
      Walker w(g.keep_sizes, {&g.keep_in, &g.keep_out[0], &g.keep_out[io]});
      w.seek(b);
      for (int64_t k = b; k < e; ++k, w.next()) {
        const ArgResult<T> r = arg_run<T, IsMax>(g.in + w.offset(0), rs, R);
        store(w.offset(1), w.offset(2), r.value, r.index);
      }
    });
    return;
  }

  // Outer: strips of keep dim 0, each row compared elementwise against the running best.
  const reduce_detail::StripPlan sp = reduce_detail::plan_strips(g, sizeof(A) + 8);
  const int64_t si = g.keep_in[0], sv = g.keep_out[0][0], sx = g.keep_out[io][0];
  const DimVector& outer_ox = io == 0 ? sp.outer_o0 : sp.outer_o1;
  auto write_strip = [&](int64_t off_v, int64_t off_i, int64_t j0, int64_t len, const A* vals,
                         const int64_t* idx) {
    for (int64_t j = 0; j < len; ++j)
      store(off_v + (j0 + j) * sv, off_i + (j0 + j) * sx, vals[j], idx[j]);
  };
  if (sp.split_rows) {
    const int64_t nchunks = std::min<int64_t>(nt, R);
    reduce_detail::AccBuffer<A> vals(static_cast<size_t>(nchunks * g.n_keep));
    std::vector<int64_t> idx(static_cast<size_t>(nchunks * g.n_keep));
    parallel_for(0, nchunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) {
        Walker w(sp.outer_sizes, {&sp.outer_in});
        w.seek(0);
        for (int64_t o = 0; o < sp.n_outer; ++o, w.next()) {
          const size_t at = static_cast<size_t>(c * g.n_keep + o * sp.m);
          arg_rows<T, IsMax>(
              g.in + w.offset(0), rs, si, sp.m, reduce_detail::chunk_begin(R, nchunks, c),
              reduce_detail::chunk_begin(R, nchunks, c + 1), vals.data() + at, idx.data() + at);
        }
      }
    });
    for (int64_t c = 1; c < nchunks; ++c) {
      for (int64_t k = 0; k < g.n_keep; ++k) {
        const size_t at = static_cast<size_t>(c * g.n_keep + k);
        if (Rules::better(vals[at], vals[k])) {
          vals[k] = vals[at];
          idx[k] = idx[at];
        }
      }
    }
    Walker w(sp.outer_sizes, {&sp.outer_o0, &outer_ox});
    w.seek(0);
    for (int64_t o = 0; o < sp.n_outer; ++o, w.next()) {
      write_strip(w.offset(0), w.offset(1), 0, sp.m, vals.data() + o * sp.m, idx.data() + o * sp.m);
    }
    return;
  }
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, sp.width * R));
  parallel_for(0, sp.ntasks, grain, [&](int64_t b, int64_t e) {
    reduce_detail::AccBuffer<A> vals(static_cast<size_t>(sp.width));
    std::vector<int64_t> idx(static_cast<size_t>(sp.width));
    Walker w(sp.outer_sizes, {&sp.outer_in, &sp.outer_o0, &outer_ox});
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / sp.nstrips, j0 = (t % sp.nstrips) * sp.width;
      const int64_t len = std::min(sp.width, sp.m - j0);
      w.seek(o);
      arg_rows<T, IsMax>(g.in + w.offset(0) + j0 * si, rs, si, len, 0, R, vals.data(), idx.data());
      write_strip(w.offset(1), w.offset(2), j0, len, vals.data(), idx.data());
    }
  });
}

void arg_reduce_kernel(TensorIterator& iter, bool is_max) {
  dispatch_dtype<kRealAndBool>(iter.dtype(iter.noutputs()), iter.name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (is_max) {
      arg_reduce_impl<T, true>(iter);
    } else {
      arg_reduce_impl<T, false>(iter);
    }
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(minmax_stub, CPU, minmax_kernel);
EMBER_REGISTER_KERNEL(arg_reduce_stub, CPU, arg_reduce_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
