// Order statistics along one dim: median / nanmedian, mode, quantile / nanquantile.
//
// Each position's line is gathered into a per-thread buffer. Median and mode select with the
// same standard-library algorithms and comparators as PyTorch's CPU kernels, so which index is
// reported among equal values (or NaNs) matches PyTorch too.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/reduce_ops.h"
#include "kernels/reduce_stubs.h"

namespace ember {
namespace native {
namespace {

template <typename T>
inline bool nan_of(T x) {
  return is_nan_value(x);
}

// Calls f(values_out, indices_out, line) for every position, line being a contiguous copy.
template <typename T, typename F>
void for_each_line(TensorIterator& iter, const DimWalk& walk, const F& f) {
  const int64_t R = walk.size;
  const int in_op = iter.noutputs();
  const int64_t si = walk.strides[in_op];
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R, 1));
  iter.for_each(
      [&](char** data, const int64_t* strides, int64_t n) {
        std::vector<T> line(static_cast<size_t>(R));
        for (int64_t k = 0; k < n; ++k) {
          const char* in = data[in_op] + k * strides[in_op];
          for (int64_t r = 0; r < R; ++r) line[r] = *reinterpret_cast<const T*>(in + r * si);
          char* o0 = data[0] + k * strides[0];
          char* o1 = iter.noutputs() > 1 ? data[1] + k * strides[1] : nullptr;
          f(o0, o1, line);
        }
      },
      grain);
}

template <typename T>
void median_impl(TensorIterator& iter, const DimWalk& walk, bool ignore_nan) {
  const int64_t size = walk.size;
  for_each_line<T>(iter, walk, [&](char* vo, char* io, std::vector<T>& line) {
    const T* ip = line.data();
    T* value = reinterpret_cast<T*>(vo);
    int64_t* index = reinterpret_cast<int64_t*>(io);
    if (!ignore_nan) {  // median: the first NaN, if any, is the answer
      const T* nanp = std::find_if(ip, ip + size, [](T x) { return nan_of(x); });
      if (nanp != ip + size) {
        *value = *nanp;
        *index = nanp - ip;
        return;
      }
    }
    std::vector<int64_t> idx(static_cast<size_t>(size));
    std::iota(idx.begin(), idx.end(), 0);
    auto nth = idx.begin();
    if (!ignore_nan) {
      nth += (size - 1) / 2;
      std::nth_element(idx.begin(), nth, idx.end(), [ip](int64_t i, int64_t j) {
        return ip[i] < ip[j] || (ip[i] == ip[j] && i < j);
      });
    } else {
      const int64_t num_nan = std::count_if(ip, ip + size, [](T x) { return nan_of(x); });
      nth += (size - num_nan - 1) / 2;
      std::nth_element(idx.begin(), nth, idx.end(), [ip](int64_t i, int64_t j) {
        return ip[i] < ip[j] || (ip[i] == ip[j] && i < j) || (nan_of(ip[j]) && !nan_of(ip[i]));
      });
    }
    *value = ip[*nth];
    *index = *nth;
  });
}

void median_kernel(TensorIterator& iter, const DimWalk& walk, bool ignore_nan) {
  dispatch_dtype<kRealTypes>(iter.dtype(2), ignore_nan ? "nanmedian" : "median", [&](auto tag) {
    median_impl<typename decltype(tag)::type>(iter, walk, ignore_nan);
  });
}

template <typename T>
void mode_impl(TensorIterator& iter, const DimWalk& walk) {
  const int64_t size = walk.size;
  for_each_line<T>(iter, walk, [&](char* vo, char* io, std::vector<T>& line) {
    std::vector<std::pair<T, int64_t>> elements(static_cast<size_t>(size));
    for (int64_t i = 0; i < size; ++i) elements[i] = {line[i], i};
    std::sort(elements.begin(), elements.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    T mode = T(0);
    int64_t mode_index = 0, run = 0, best_run = 0;
    for (int64_t i = 0; i < size; ++i) {
      ++run;
      if (i == size - 1 || elements[i].first != elements[i + 1].first) {
        if (run > best_run) {  // the first (smallest) of the most frequent values wins
          mode = elements[i].first;
          mode_index = elements[i].second;
          best_run = run;
        }
        run = 0;
      }
    }
    *reinterpret_cast<T*>(vo) = mode;
    *reinterpret_cast<int64_t*>(io) = mode_index;
  });
}

void mode_kernel(TensorIterator& iter, const DimWalk& walk) {
  dispatch_dtype<kRealAndBool>(iter.dtype(2), "mode", [&](auto tag) {
    mode_impl<typename decltype(tag)::type>(iter, walk);
  });
}

// torch.lerp's formula, which is exact at both ends.
template <typename T>
inline T lerp(T a, T b, T w) {
  return w < T(0.5) ? a + w * (b - a) : b - (b - a) * (T(1) - w);
}

template <typename T>
void quantile_impl(TensorIterator& iter, const DimWalk& walk, const std::vector<double>& qs,
                   int64_t q_stride, QuantileInterpolation mode, bool ignore_nan) {
  const int64_t size = walk.size;
  for_each_line<T>(iter, walk, [&](char* out, char*, std::vector<T>& line) {
    // NaNs sort last, as torch.sort puts them.
    std::sort(line.begin(), line.end(), [](T a, T b) { return a < b || (b != b && a == a); });
    const int64_t valid =
        ignore_nan ? std::count_if(line.begin(), line.end(), [](T x) { return x == x; }) : size;
    const bool has_nan = valid != size || line.back() != line.back();
    for (size_t qi = 0; qi < qs.size(); ++qi) {
      // q has the input's dtype; its rank q * (n - 1) is formed in double, as PyTorch does,
      // so the rounding of 'nearest' and the lerp branch see the unrounded product.
      const double q = static_cast<double>(static_cast<T>(qs[qi]));
      double rank;
      if (ignore_nan) {
        rank = std::max(0.0, q * static_cast<double>(valid - 1));  // all NaN: rank 0 (a NaN)
      } else {
        rank = has_nan ? static_cast<double>(size - 1) : q * static_cast<double>(size - 1);
      }
      switch (mode) {
        case QuantileInterpolation::Lower:
          rank = std::floor(rank);
          break;
        case QuantileInterpolation::Higher:
          rank = std::ceil(rank);
          break;
        case QuantileInterpolation::Nearest:
          rank = std::nearbyint(rank);
          break;  // half-even
        default:
          break;
      }
      const int64_t below = static_cast<int64_t>(rank);
      T result = line[below];
      if (mode == QuantileInterpolation::Linear || mode == QuantileInterpolation::Midpoint) {
        const T weight = mode == QuantileInterpolation::Midpoint
                             ? T(0.5)
                             : static_cast<T>(rank - static_cast<double>(below));
        const int64_t above = static_cast<int64_t>(std::ceil(rank));
        result = lerp(result, line[above], weight);
      }
      *reinterpret_cast<T*>(out + static_cast<int64_t>(qi) * q_stride) = result;
    }
  });
}

void quantile_kernel(TensorIterator& iter, const DimWalk& walk, const std::vector<double>& q,
                     int64_t q_stride, QuantileInterpolation mode, bool ignore_nan) {
  dispatch_dtype<kFloat32 | kFloat64>(iter.dtype(1), "quantile", [&](auto tag) {
    quantile_impl<typename decltype(tag)::type>(iter, walk, q, q_stride, mode, ignore_nan);
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(median_stub, CPU, median_kernel);
EMBER_REGISTER_KERNEL(mode_stub, CPU, mode_kernel);
EMBER_REGISTER_KERNEL(quantile_stub, CPU, quantile_kernel);

}  // namespace native
}  // namespace ember
