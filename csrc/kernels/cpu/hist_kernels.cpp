// Kernels of the counting/searching ops: minmax (histogram ranges), histogram, bincount,
// searchsorted.
#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <vector>

#include "core/deterministic.h"
#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "kernels/sort_stubs.h"

namespace ember {
namespace native {
namespace {

std::pair<double, double> minmax_kernel(const Tensor& self) {
  return dispatch_dtype<kFloatingTypes>(self.dtype(), "histc", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = self.data<T>();
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    bool nan = false;
    for (int64_t i = 0; i < self.numel(); ++i) {
      const double v = static_cast<double>(static_cast<acc_type<T>>(p[i]));
      if (std::isnan(v)) nan = true;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    if (nan) lo = hi = std::numeric_limits<double>::quiet_NaN();
    return std::pair<double, double>(lo, hi);
  });
}

// Bins are [e[i], e[i+1]) except the last, which is closed. Values outside [e[0], e[bins]] and
// NaN are not counted. The arithmetic bin position is computed in the input dtype, rounding after
// each operation as PyTorch does (this decides which bin an edge value lands in).
template <typename T>
T rounded(acc_type<T> v) {
  return static_cast<T>(v);
}

void histogram_kernel(const Tensor& hist, const Tensor& self, const Tensor& weight,
                      const Tensor& edges, BinSearch search) {
  dispatch_dtype<kFloatingTypes>(self.dtype(), "histogram", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_type<T>;
    const T* x = self.data<T>();
    const T* w = weight.defined() ? weight.data<T>() : nullptr;
    const T* ep = edges.data<T>();
    const int64_t bins = edges.numel() - 1;
    std::vector<A> e(bins + 1);
    for (int64_t i = 0; i <= bins; ++i) e[i] = static_cast<A>(ep[i]);
    const A lo = e[0], hi = e[bins];
    const T width = rounded<T>(hi - lo);
    double* out = hist.data<double>();
    // Adds the (weighted) counts of elements [b, end) into local[0, bins).
    auto count = [&](int64_t b, int64_t end, double* local) {
      for (int64_t i = b; i < end; ++i) {
        const A v = static_cast<A>(x[i]);
        if (!(v >= lo && v <= hi)) continue;  // also skips NaN
        int64_t pos;
        if (search == BinSearch::kBinarySearch) {
          pos = std::upper_bound(e.begin(), e.end(), v) - e.begin() - 1;
        } else {
          const T d = rounded<T>(v - lo);
          const T scaled = rounded<T>(static_cast<A>(d) * static_cast<A>(static_cast<T>(bins)));
          pos = static_cast<int64_t>(
              static_cast<A>(rounded<T>(static_cast<A>(scaled) / static_cast<A>(width))));
          if (search == BinSearch::kLinearLocalSearch) {
            const int64_t pmin = std::max<int64_t>(0, pos - 1);
            const int64_t pmax = std::min<int64_t>(pos + 2, bins + 1);
            pos = std::upper_bound(e.begin() + pmin, e.begin() + pmax, v) - e.begin() - 1;
          }
        }
        pos = std::clamp<int64_t>(pos, 0, bins - 1);  // the last edge belongs to the last bin
        local[pos] += w ? static_cast<double>(static_cast<A>(w[i])) : 1.0;
      }
    };
    const int64_t n = self.numel();
    if (deterministic_algorithms()) {
      // Note [Deterministic Algorithms]: fixed pieces whatever the thread count, merged in
      // input order (the mutex below merges in whatever order the threads finish, which
      // changes the rounding of weighted sums).
      const int64_t pieces = kDeterministicChunks;
      std::vector<double> locals(static_cast<size_t>(pieces * bins), 0.0);
      parallel_for(0, pieces, n >= 2 * kGrainSize ? 1 : pieces, [&](int64_t p0, int64_t p1) {
        for (int64_t q = p0; q < p1; ++q) {
          count(n / pieces * q + std::min(q, n % pieces),
                n / pieces * (q + 1) + std::min(q + 1, n % pieces), locals.data() + q * bins);
        }
      });
      for (int64_t q = 0; q < pieces; ++q) {
        for (int64_t k = 0; k < bins; ++k) out[k] += locals[q * bins + k];
      }
      return;
    }
    std::mutex merge;
    parallel_for(0, n, kGrainSize, [&](int64_t b, int64_t end) {
      std::vector<double> local(bins, 0.0);
      count(b, end, local.data());
      std::lock_guard<std::mutex> lock(merge);
      for (int64_t k = 0; k < bins; ++k) out[k] += local[k];
    });
  });
}

void bincount_kernel(const Tensor& out, const Tensor& idx, const Tensor& weights) {
  const int64_t* p = idx.data<int64_t>();
  const int64_t n = idx.numel();
  if (!weights.defined()) {
    int64_t* o = out.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) ++o[p[i]];
    return;
  }
  dispatch_dtype<kFloat32 | kFloat64>(out.dtype(), "bincount", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    const T* w = weights.data<T>();
    for (int64_t i = 0; i < n; ++i) o[p[i]] += w[i];
  });
}

// PyTorch's binary searches, reproduced exactly (including how NaN compares), so results agree
// even for unsorted or NaN-holding boundaries.
template <typename T>
int64_t lower_bound(const T* bd, int64_t start, int64_t end, T val, const int64_t* sort) {
  const int64_t orig = start;
  while (start < end) {
    const int64_t mid = start + ((end - start) >> 1);
    const T mid_val = sort ? bd[sort[mid] + orig] : bd[mid];
    if (!(mid_val >= val))
      start = mid + 1;
    else
      end = mid;
  }
  return start;
}
template <typename T>
int64_t upper_bound(const T* bd, int64_t start, int64_t end, T val, const int64_t* sort) {
  const int64_t orig = start;
  while (start < end) {
    const int64_t mid = start + ((end - start) >> 1);
    const T mid_val = sort ? bd[sort[mid] + orig] : bd[mid];
    if (!(mid_val > val))
      start = mid + 1;
    else
      end = mid;
  }
  return start;
}

void searchsorted_kernel(const Tensor& out, const Tensor& boundaries, const Tensor& values,
                         const Tensor& sorter, bool right) {
  dispatch_dtype<kRealTypes>(values.dtype(), "searchsorted", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_type<T>;
    const T* bd = boundaries.data<T>();
    const T* v = values.data<T>();
    const int64_t* srt = sorter.defined() ? sorter.data<int64_t>() : nullptr;
    const int64_t m = boundaries.size(-1 + boundaries.dim());
    const bool shared = boundaries.dim() == 1;
    const int64_t per_row = values.dim() > 0 ? values.size(-1 + values.dim()) : 1;
    const bool i32 = out.dtype() == ScalarType::Int32;
    std::vector<A> row;
    if constexpr (is_reduced_float_v<T>) {
      row.resize(boundaries.numel());
      for (int64_t i = 0; i < boundaries.numel(); ++i) row[i] = static_cast<A>(bd[i]);
    }
    parallel_for(0, values.numel(), kGrainSize / 16, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const int64_t start = shared ? 0 : (i / per_row) * m;
        const A val = static_cast<A>(v[i]);
        int64_t pos;
        if constexpr (is_reduced_float_v<T>) {
          pos = right ? upper_bound<A>(row.data(), start, start + m, val, srt)
                      : lower_bound<A>(row.data(), start, start + m, val, srt);
        } else {
          pos = right ? upper_bound<T>(bd, start, start + m, val, srt)
                      : lower_bound<T>(bd, start, start + m, val, srt);
        }
        pos -= start;
        if (i32)
          out.data<int32_t>()[i] = static_cast<int32_t>(pos);
        else
          out.data<int64_t>()[i] = pos;
      }
    });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(hist_range_stub, CPU, minmax_kernel);
EMBER_REGISTER_KERNEL(histogram_stub, CPU, histogram_kernel);
EMBER_REGISTER_KERNEL(bincount_stub, CPU, bincount_kernel);
EMBER_REGISTER_KERNEL(searchsorted_stub, CPU, searchsorted_kernel);

}  // namespace native
}  // namespace ember
