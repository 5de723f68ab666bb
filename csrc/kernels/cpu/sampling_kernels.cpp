// CPU kernels for randperm (Fisher-Yates) and multinomial (inverse CDF with replacement,
// Efraimidis-Spirakis keys without).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/random_utils.h"
#include "kernels/random_stubs.h"

namespace ember {
namespace native {
namespace {

// 64 random bits for value v of an op that takes two values per block.
inline uint64_t draw64(const PhiloxState& st, int64_t v) {
  const PhiloxBlock w = st.block(static_cast<uint64_t>(v) / 2);
  const int k = static_cast<int>(v % 2);
  return (uint64_t(w[2 * k + 1]) << 32) | w[2 * k];
}

inline double draw_uniform(const PhiloxState& st, int64_t v) {
  const uint64_t r = draw64(st, v);
  return uniform_double(static_cast<uint32_t>(r), static_cast<uint32_t>(r >> 32));
}

void randperm_kernel(const Tensor& out, PhiloxState st) {
  const int64_t n = out.numel();
  // Swap i draws from [i, n) with the i-th 64-bit value; the modulo bias (n / 2^64) is
  // negligible for any n that fits in memory.
  std::vector<int64_t> perm(n);
  std::iota(perm.begin(), perm.end(), int64_t(0));
  for (int64_t i = 0; i + 1 < n; ++i) {
    const int64_t j = i + static_cast<int64_t>(draw64(st, i) % static_cast<uint64_t>(n - i));
    std::swap(perm[i], perm[j]);
  }
  dispatch_dtype<kRealTypes>(out.dtype(), "randperm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* data = out.data<T>();
    for (int64_t i = 0; i < n; ++i) data[i] = convert<T>(perm[i]);
  });
}

void multinomial_kernel(const Tensor& out, const Tensor& probs, bool replacement, PhiloxState st) {
  const int64_t rows = probs.numel() == 0 ? 0 : probs.numel() / probs.size(probs.dim() - 1);
  const int64_t ncat = probs.size(probs.dim() - 1);
  const int64_t k = out.size(out.dim() - 1);
  const double* p = probs.data<double>();
  int64_t* result = out.data<int64_t>();
  parallel_for(0, rows, 1, [&](int64_t row_begin, int64_t row_end) {
    std::vector<double> work(ncat);
    std::vector<int64_t> order;
    for (int64_t r = row_begin; r < row_end; ++r) {
      const double* pr = p + r * ncat;
      int64_t* res = result + r * k;
      if (replacement) {
        // Inverse CDF: the first category whose cumulative weight exceeds u * total. A
        // zero-weight category has cdf[c] == cdf[c - 1] and can never be that first one.
        std::partial_sum(pr, pr + ncat, work.begin());
        const double total = work[ncat - 1];
        int64_t last = ncat - 1;  // rounding may put u at total: never pick a zero weight there
        while (last > 0 && pr[last] == 0.0) --last;
        for (int64_t s = 0; s < k; ++s) {
          const double u = draw_uniform(st, r * k + s) * total;
          auto it = std::upper_bound(work.begin(), work.end(), u);
          res[s] = std::min<int64_t>(it - work.begin(), last);
        }
      } else {
        // Efraimidis-Spirakis: category c gets key p_c / E_c with E_c ~ Exp(1); the k largest
        // keys are a weighted sample without replacement, in the order they were drawn.
        for (int64_t c = 0; c < ncat; ++c) {
          const double e = -std::log1p(-draw_uniform(st, r * ncat + c));
          work[c] = pr[c] > 0.0 ? pr[c] / e : -1.0;  // zero weights last, in index order
        }
        order.resize(ncat);
        std::iota(order.begin(), order.end(), int64_t(0));
        std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
          return work[a] > work[b] || (work[a] == work[b] && a < b);
        });
        std::copy(order.begin(), order.begin() + k, res);
      }
    }
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(randperm_stub, CPU, randperm_kernel);
EMBER_REGISTER_KERNEL(multinomial_stub, CPU, multinomial_kernel);

}  // namespace native
}  // namespace ember
