// unique_stub: orders the rows of a contiguous (n, m) tensor (lexicographically, stable, NaN
// after numbers) and marks where runs of equal rows begin. Equality is value equality, so -0.0
// equals 0.0 and NaN equals nothing (each NaN is its own group, as in PyTorch).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "dispatch/dtype_dispatch.h"
#include "kernels/sort_stubs.h"

namespace ember {
namespace native {
namespace {

template <typename K>
inline bool less_nan_last(K a, K b) {
  if constexpr (std::is_floating_point_v<K>)
    return a < b || (std::isnan(b) && !std::isnan(a));
  else
    return a < b;
}

void unique_kernel(const Tensor& rows, bool sort, std::vector<int64_t>& order,
                   std::vector<int64_t>& group_start) {
  dispatch_dtype<kRealAndBool>(rows.dtype(), "unique", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using K = std::conditional_t<is_reduced_float_v<T>, float, T>;
    const int64_t n = rows.size(0), m = rows.numel() / std::max<int64_t>(n, 1);
    const T* data = rows.data<T>();
    auto at = [&](int64_t r, int64_t j) { return static_cast<K>(data[r * m + j]); };
    order.resize(n);
    if (sort && m == 1) {
      std::vector<std::pair<K, int64_t>> buf(n);
      for (int64_t i = 0; i < n; ++i) buf[i] = {at(i, 0), i};
      std::stable_sort(buf.begin(), buf.end(), [](const auto& a, const auto& b) {
        return less_nan_last(a.first, b.first);
      });
      for (int64_t i = 0; i < n; ++i) order[i] = buf[i].second;
    } else {
      std::iota(order.begin(), order.end(), 0);
      if (sort) {
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
          for (int64_t j = 0; j < m; ++j) {
            K x = at(a, j), y = at(b, j);
            if (less_nan_last(x, y)) return true;
            if (less_nan_last(y, x)) return false;
          }
          return false;
        });
      }
    }
    group_start.clear();
    for (int64_t i = 0; i < n; ++i) {
      bool same = i > 0;
      for (int64_t j = 0; same && j < m; ++j) same = at(order[i - 1], j) == at(order[i], j);
      if (!same) group_start.push_back(i);
    }
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(unique_stub, CPU, unique_kernel);

}  // namespace native
}  // namespace ember
