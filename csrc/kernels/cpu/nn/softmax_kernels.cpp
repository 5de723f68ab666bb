// CPU kernels of softmax / log_softmax and their backward (float32 / float64; the op layer
// computes float16 / bfloat16 in float32). A contiguous tensor is (outer, n, inner):
// - inner == 1 (the reduced dim is the last one): one pass per row, vectorised along the row;
// - inner > 1: blocks of up to kBlock adjacent columns are processed together, so every load
//   is contiguous and the per-column max / sum live in small arrays the loop vectorises over.
// exp uses vmath::exp (vectorisable, <= 2 ulp), see Note [Vectorisable math] in vec_math.h.
#include <algorithm>
#include <cmath>

#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/nn/row_ops.h"
#include "kernels/cpu/vec_math.h"
#include "kernels/nn/softmax_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

using nn_rows::kBlock;

template <typename T>
EMBER_NN_FLATTEN void softmax_backward_row(const T* g, const T* y, T* gi, int64_t n, bool log) {
  if (log) {
    const T s = nn_rows::sum<T>(n, [&](int64_t i) { return g[i]; });
    for (int64_t i = 0; i < n; ++i) gi[i] = g[i] - vmath::exp(y[i]) * s;
  } else {
    const T dot = nn_rows::sum<T>(n, [&](int64_t i) { return g[i] * y[i]; });
    for (int64_t i = 0; i < n; ++i) gi[i] = y[i] * (g[i] - dot);
  }
}

template <typename T>
EMBER_NN_FLATTEN void softmax_backward_columns(const T* g, const T* y, T* gi, int64_t n,
                                               int64_t inner, int64_t L, bool log) {
  T s[kBlock];
  for (int64_t j = 0; j < L; ++j) s[j] = 0;
  for (int64_t k = 0; k < n; ++k) {
    const T* gr = g + k * inner;
    const T* yr = y + k * inner;
    if (log) {
      for (int64_t j = 0; j < L; ++j) s[j] += gr[j];
    } else {
      for (int64_t j = 0; j < L; ++j) s[j] += gr[j] * yr[j];
    }
  }
  for (int64_t k = 0; k < n; ++k) {
    const T* gr = g + k * inner;
    const T* yr = y + k * inner;
    T* out = gi + k * inner;
    if (log) {
      for (int64_t j = 0; j < L; ++j) out[j] = gr[j] - vmath::exp(yr[j]) * s[j];
    } else {
      for (int64_t j = 0; j < L; ++j) out[j] = yr[j] * (gr[j] - s[j]);
    }
  }
}

// Runs row(offset) for every row (inner == 1) or columns(offset, L) for every column block,
// in parallel; offset is the element offset of the row / block start.
template <typename Row, typename Cols>
void for_each_slice(int64_t outer, int64_t n, int64_t inner, const Row& row, const Cols& cols) {
  if (inner == 1) {
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1));
    parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) row(r * n);
    });
    return;
  }
  const int64_t blocks = (inner + kBlock - 1) / kBlock;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n * kBlock, 1));
  parallel_for(0, outer * blocks, grain, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / blocks, c0 = (t % blocks) * kBlock;
      cols(o * n * inner + c0, std::min(kBlock, inner - c0));
    }
  });
}

void softmax_kernel(const Tensor& out, const Tensor& in, int64_t outer, int64_t n, int64_t inner,
                    bool log) {
  dispatch_dtype<kFloat32 | kFloat64>(in.dtype(), log ? "log_softmax" : "softmax", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in.data<T>();
    T* y = out.data<T>();
    for_each_slice(
        outer, n, inner, [&](int64_t off) { nn_rows::softmax(x + off, y + off, n, log); },
        [&](int64_t off, int64_t L) {
          nn_rows::softmax_columns(x + off, y + off, n, inner, L, log);
        });
  });
}

void softmax_backward_kernel(const Tensor& grad_in, const Tensor& grad, const Tensor& out,
                             int64_t outer, int64_t n, int64_t inner, bool log) {
  dispatch_dtype<kFloat32 | kFloat64>(out.dtype(), "softmax_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* g = grad.data<T>();
    const T* y = out.data<T>();
    T* gi = grad_in.data<T>();
    for_each_slice(
        outer, n, inner,
        [&](int64_t off) { softmax_backward_row(g + off, y + off, gi + off, n, log); },
        [&](int64_t off, int64_t L) {
          softmax_backward_columns(g + off, y + off, gi + off, n, inner, L, log);
        });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(softmax_stub, CPU, softmax_kernel);
EMBER_REGISTER_KERNEL(softmax_backward_stub, CPU, softmax_backward_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
