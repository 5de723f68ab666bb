// CPU kernels of batch_norm on contiguous (N, C, S) data (float32 / float64): per-channel
// statistics (two passes), the affine normalisation and the fused backward.
// Two layouts of the work:
// - S >= kRunPath: a channel is N runs of S contiguous elements; work is split over channels.
// - small S (S = 1 after a Linear layer): each sample is one contiguous row of C * S elements;
//   work is split over fixed blocks of samples that accumulate per-column sums (vectorised along
//   the row), added in block order; per-channel values are expanded to per-column arrays.
// Both are deterministic (independent of the thread count).
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/nn/row_ops.h"
#include "kernels/nn/norm_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

constexpr int64_t kRunPath = 32;
constexpr int64_t kRowBlocks = 32;

// sum over channel c's N runs of f(k) (k the element offset).
template <typename T, typename F>
double channel_sum(int64_t N, int64_t C, int64_t S, int64_t c, const F& f) {
  double s = 0;
  for (int64_t n = 0; n < N; ++n) {
    const int64_t off = (n * C + c) * S;
    s += nn_rows::sum_blocked<T>(S, [&](int64_t i) { return f(off + i); });
  }
  return s;
}

int64_t channel_grain(int64_t N, int64_t S) {
  return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(N * S, 1));
}

// Small-S path: per channel, sum over samples and positions of f(k, j) where k is the element
// offset and j = k % (C * S) its column. Returns C sums.
template <typename T, typename F>
std::vector<double> column_sums(int64_t N, int64_t C, int64_t S, const F& f) {
  const int64_t W = C * S;
  const int64_t blocks = std::min(N, kRowBlocks);
  std::vector<double> part(blocks * W, 0.0);
  parallel_for(0, blocks, 1, [&](int64_t bb, int64_t be) {
    // Rows are summed in T (vectorised), flushed into double every kFlushRows rows.
    constexpr int64_t kFlushRows = 256;
    std::vector<T> acc(W);
    for (int64_t blk = bb; blk < be; ++blk) {
      double* out = part.data() + blk * W;
      const int64_t n0 = N * blk / blocks, n1 = N * (blk + 1) / blocks;
      for (int64_t f0 = n0; f0 < n1; f0 += kFlushRows) {
        std::fill(acc.begin(), acc.end(), T(0));
        for (int64_t n = f0; n < std::min(n1, f0 + kFlushRows); ++n) {
          const int64_t off = n * W;
          for (int64_t j = 0; j < W; ++j) acc[j] += f(off + j, j);
        }
        for (int64_t j = 0; j < W; ++j) out[j] += acc[j];
      }
    }
  });
  std::vector<double> out(C, 0.0);
  for (int64_t blk = 0; blk < blocks; ++blk) {
    for (int64_t j = 0; j < W; ++j) out[j / S] += part[blk * W + j];
  }
  return out;
}

// A per-channel value repeated for each of the channel's S columns.
template <typename T>
std::vector<T> expand_columns(const std::vector<double>& v, int64_t S) {
  std::vector<T> e(v.size() * S);
  for (size_t j = 0; j < e.size(); ++j) e[j] = static_cast<T>(v[j / S]);
  return e;
}

template <typename T>
void stats_impl(T* mean, T* var, const T* x, int64_t N, int64_t C, int64_t S) {
  const double count = static_cast<double>(N * S);
  if (S < kRunPath) {
    std::vector<double> mu = column_sums<T>(N, C, S, [&](int64_t k, int64_t) { return x[k]; });
    for (double& m : mu) m /= count;
    const std::vector<T> mu_e = expand_columns<T>(mu, S);
    const std::vector<double> sq = column_sums<T>(N, C, S, [&](int64_t k, int64_t j) {
      const T d = x[k] - mu_e[j];
      return d * d;
    });
    for (int64_t c = 0; c < C; ++c) {
      mean[c] = static_cast<T>(mu[c]);
      var[c] = static_cast<T>(sq[c] / count);
    }
    return;
  }
  parallel_for(0, C, channel_grain(N, S), [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const double mu = channel_sum<T>(N, C, S, c, [&](int64_t k) { return x[k]; }) / count;
      const T m = static_cast<T>(mu);
      const double v =
          channel_sum<T>(N, C, S, c, [&](int64_t k) { return (x[k] - m) * (x[k] - m); }) / count;
      mean[c] = m;
      var[c] = static_cast<T>(v);
    }
  });
}

template <typename T>
void apply_impl(T* y, const T* x, const T* mean, const T* invstd, const T* w, const T* b, int64_t N,
                int64_t C, int64_t S) {
  std::vector<double> scale(C), shift(C);
  for (int64_t c = 0; c < C; ++c) {
    scale[c] = double(invstd[c]) * (w ? double(w[c]) : 1.0);
    shift[c] = (b ? double(b[c]) : 0.0) - double(mean[c]) * scale[c];
  }
  if (S < kRunPath) {
    const std::vector<T> a = expand_columns<T>(scale, S), d = expand_columns<T>(shift, S);
    const int64_t W = C * S;
    parallel_for(0, N, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(W, 1)),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t n = begin; n < end; ++n) {
                     const T* xr = x + n * W;
                     T* yr = y + n * W;
                     for (int64_t j = 0; j < W; ++j) yr[j] = xr[j] * a[j] + d[j];
                   }
                 });
    return;
  }
  const int64_t grain = std::max<int64_t>(1, kGrainSize / S);
  parallel_for(0, N * C, grain, [&](int64_t begin, int64_t end) {
    for (int64_t nc = begin; nc < end; ++nc) {
      const T a = static_cast<T>(scale[nc % C]), d = static_cast<T>(shift[nc % C]);
      const T* xr = x + nc * S;
      T* yr = y + nc * S;
      for (int64_t i = 0; i < S; ++i) yr[i] = xr[i] * a + d;
    }
  });
}

// train: dx = (g - mean(g) - (x - mu) * invstd^2 * mean(g * (x - mu))) * invstd * w
// eval:  dx = g * invstd * w;   dw = sum(g * (x - mu)) * invstd;   db = sum(g).
template <typename T>
void backward_impl(T* dx, T* dw, T* db, const T* g, const T* x, const T* mean, const T* invstd,
                   const T* w, int64_t N, int64_t C, int64_t S, bool train) {
  const double count = static_cast<double>(N * S);
  std::vector<double> sum_g(C), sum_gx(C);
  if (S < kRunPath) {
    std::vector<double> mu(C);
    for (int64_t c = 0; c < C; ++c) mu[c] = mean[c];
    const std::vector<T> mu_e = expand_columns<T>(mu, S);
    sum_g = column_sums<T>(N, C, S, [&](int64_t k, int64_t) { return g[k]; });
    sum_gx = column_sums<T>(N, C, S, [&](int64_t k, int64_t j) { return g[k] * (x[k] - mu_e[j]); });
  } else {
    parallel_for(0, C, channel_grain(N, S), [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const T mu = mean[c];
        sum_g[c] = channel_sum<T>(N, C, S, c, [&](int64_t k) { return g[k]; });
        sum_gx[c] = channel_sum<T>(N, C, S, c, [&](int64_t k) { return g[k] * (x[k] - mu); });
      }
    });
  }
  std::vector<double> a(C), k(C), m(C), mu(C);
  for (int64_t c = 0; c < C; ++c) {
    const double is = invstd[c];
    if (dw) dw[c] = static_cast<T>(sum_gx[c] * is);
    if (db) db[c] = static_cast<T>(sum_g[c]);
    a[c] = is * (w ? double(w[c]) : 1.0);
    k[c] = train ? is * is * sum_gx[c] / count : 0.0;
    m[c] = train ? sum_g[c] / count : 0.0;
    mu[c] = mean[c];
  }
  if (!dx) return;
  const int64_t W = C * S;
  if (S < kRunPath) {
    const std::vector<T> ae = expand_columns<T>(a, S), ke = expand_columns<T>(k, S),
                         me = expand_columns<T>(m, S), mue = expand_columns<T>(mu, S);
    parallel_for(0, N, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(W, 1)),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t n = begin; n < end; ++n) {
                     const int64_t off = n * W;
                     for (int64_t j = 0; j < W; ++j) {
                       dx[off + j] = (g[off + j] - me[j] - (x[off + j] - mue[j]) * ke[j]) * ae[j];
                     }
                   }
                 });
    return;
  }
  parallel_for(0, N * C, std::max<int64_t>(1, kGrainSize / S), [&](int64_t begin, int64_t end) {
    for (int64_t nc = begin; nc < end; ++nc) {
      const int64_t c = nc % C;
      const T ac = static_cast<T>(a[c]), kc = static_cast<T>(k[c]), mc = static_cast<T>(m[c]),
              muc = static_cast<T>(mu[c]);
      const int64_t off = nc * S;
      for (int64_t i = 0; i < S; ++i) {
        dx[off + i] = (g[off + i] - mc - (x[off + i] - muc) * kc) * ac;
      }
    }
  });
}

template <typename T>
const T* cptr(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}
template <typename T>
T* mptr(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

void stats_kernel(const Tensor& mean, const Tensor& var, const Tensor& x, int64_t N, int64_t C,
                  int64_t S) {
  dispatch_dtype<kFloat32 | kFloat64>(x.dtype(), "batch_norm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    stats_impl<T>(mean.data<T>(), var.data<T>(), x.data<T>(), N, C, S);
  });
}

void apply_kernel(const Tensor& out, const Tensor& x, const Tensor& mean, const Tensor& invstd,
                  const Tensor& w, const Tensor& b, int64_t N, int64_t C, int64_t S) {
  dispatch_dtype<kFloat32 | kFloat64>(x.dtype(), "batch_norm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    apply_impl<T>(out.data<T>(), x.data<T>(), mean.data<T>(), invstd.data<T>(), cptr<T>(w),
                  cptr<T>(b), N, C, S);
  });
}

void backward_kernel(const Tensor& dx, const Tensor& dw, const Tensor& db, const Tensor& g,
                     const Tensor& x, const Tensor& mean, const Tensor& invstd, const Tensor& w,
                     int64_t N, int64_t C, int64_t S, bool train) {
  dispatch_dtype<kFloat32 | kFloat64>(x.dtype(), "batch_norm_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    backward_impl<T>(mptr<T>(dx), mptr<T>(dw), mptr<T>(db), g.data<T>(), x.data<T>(),
                     mean.data<T>(), invstd.data<T>(), cptr<T>(w), N, C, S, train);
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(batch_norm_stats_stub, CPU, stats_kernel);
EMBER_REGISTER_KERNEL(batch_norm_apply_stub, CPU, apply_kernel);
EMBER_REGISTER_KERNEL(batch_norm_backward_stub, CPU, backward_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
