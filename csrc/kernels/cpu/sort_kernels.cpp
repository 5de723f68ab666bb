// sort and topk along one dim. Each row is loaded into (key, index) pairs, ordered with NaN
// treated as larger than every number (PyTorch's order), and written back; the value is re-read
// from the input by index so its bits (-0.0, NaN payloads) survive unchanged.
#include <algorithm>
#include <cmath>
#include <vector>

#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/row_loop.h"
#include "kernels/sort_stubs.h"

namespace ember {
namespace native {
namespace {

template <typename K>
inline bool is_nan_key(K v) {
  if constexpr (std::is_floating_point_v<K>)
    return std::isnan(v);
  else
    return false;
}

// Ascending order with NaN last.
template <typename K>
struct LessNanLast {
  bool operator()(K a, K b) const { return a < b || (is_nan_key(b) && !is_nan_key(a)); }
};
// Descending order with NaN first.
template <typename K>
struct GreaterNanFirst {
  bool operator()(K a, K b) const { return a > b || (is_nan_key(a) && !is_nan_key(b)); }
};

template <typename T>
using key_t = std::conditional_t<is_reduced_float_v<T>, float, T>;

template <typename T, typename Cmp>
void sort_rows(const Tensor& values, const Tensor& indices, const Tensor& self, int64_t dim,
               Cmp cmp) {
  using K = key_t<T>;
  const int64_t n = self.dim() > 0 ? self.size(dim) : 1;
  for_each_row<3>(self.sizes(), dim, {&values, &indices, &self}, n,
                  [&](const std::array<char*, 3>& p, const std::array<int64_t, 3>& s) {
                    thread_local std::vector<std::pair<K, int64_t>> buf;
                    buf.resize(n);
                    for (int64_t i = 0; i < n; ++i) {
                      buf[i] = {static_cast<K>(*reinterpret_cast<const T*>(p[2] + i * s[2])), i};
                    }
                    std::stable_sort(buf.begin(), buf.end(), [&](const auto& a, const auto& b) {
                      return cmp(a.first, b.first);
                    });
                    for (int64_t i = 0; i < n; ++i) {
                      *reinterpret_cast<T*>(p[0] + i * s[0]) =
                          *reinterpret_cast<const T*>(p[2] + buf[i].second * s[2]);
                      *reinterpret_cast<int64_t*>(p[1] + i * s[1]) = buf[i].second;
                    }
                  });
}

void sort_kernel(const Tensor& values, const Tensor& indices, const Tensor& self, int64_t dim,
                 bool descending) {
  dispatch_dtype<kRealAndBool>(self.dtype(), "sort", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using K = key_t<T>;
    if (descending)
      sort_rows<T>(values, indices, self, dim, GreaterNanFirst<K>{});
    else
      sort_rows<T>(values, indices, self, dim, LessNanLast<K>{});
  });
}

template <typename T, typename Cmp>
void topk_rows(const Tensor& values, const Tensor& indices, const Tensor& self, int64_t k,
               int64_t dim, Cmp cmp) {
  using K = key_t<T>;
  const int64_t n = self.dim() > 0 ? self.size(dim) : 1;
  // values/indices have size k along dim, so iterate rows over their shape.
  for_each_row<3>(values.sizes(), dim, {&values, &indices, &self}, n,
                  [&](const std::array<char*, 3>& p, const std::array<int64_t, 3>& s) {
                    thread_local std::vector<std::pair<K, int64_t>> buf;
                    buf.resize(n);
                    for (int64_t i = 0; i < n; ++i) {
                      buf[i] = {static_cast<K>(*reinterpret_cast<const T*>(p[2] + i * s[2])), i};
                    }
                    // Ties broken by index, so the result is the first k of a stable sort.
                    auto order = [&](const auto& a, const auto& b) {
                      if (cmp(a.first, b.first)) return true;
                      if (cmp(b.first, a.first)) return false;
                      return a.second < b.second;
                    };
                    if (k < n) {
                      std::nth_element(buf.begin(), buf.begin() + k, buf.end(), order);
                    }
                    std::sort(buf.begin(), buf.begin() + k, order);
                    for (int64_t i = 0; i < k; ++i) {
                      *reinterpret_cast<T*>(p[0] + i * s[0]) =
                          *reinterpret_cast<const T*>(p[2] + buf[i].second * s[2]);
                      *reinterpret_cast<int64_t*>(p[1] + i * s[1]) = buf[i].second;
                    }
                  });
}

void topk_kernel(const Tensor& values, const Tensor& indices, const Tensor& self, int64_t k,
                 int64_t dim, bool largest) {
  dispatch_dtype<kRealTypes>(self.dtype(), "topk", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using K = key_t<T>;
    if (largest)
      topk_rows<T>(values, indices, self, k, dim, GreaterNanFirst<K>{});
    else
      topk_rows<T>(values, indices, self, k, dim, LessNanLast<K>{});
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(sort_stub, CPU, sort_kernel);
EMBER_REGISTER_KERNEL(topk_stub, CPU, topk_kernel);

}  // namespace native
}  // namespace ember
