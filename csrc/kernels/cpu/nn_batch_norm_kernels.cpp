// CPU kernels of batch_norm on contiguous (N, C, S) data (float32 / float64): per-channel
// statistics (two passes, accumulated in double), the affine normalisation and the fused
// backward. Work is split over channels; a channel's data is N runs of S elements.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/nn_row_ops.h"
#include "ops/nn_norm.h"

namespace ember {
namespace {

// sum over the channel's N runs of f(run pointer offset, i).
template <typename F>
double channel_sum(int64_t N, int64_t C, int64_t S, int64_t c, const F& f) {
  double s = 0;
  for (int64_t n = 0; n < N; ++n) {
    const int64_t off = (n * C + c) * S;
    s += nn_rows::sum<double>(S, [&](int64_t i) { return f(off + i); });
  }
  return s;
}

int64_t channel_grain(int64_t N, int64_t S) {
  return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(N * S, 1));
}

template <typename T>
void stats_impl(T* mean, T* var, const T* x, int64_t N, int64_t C, int64_t S) {
  const double count = static_cast<double>(N * S);
  parallel_for(0, C, channel_grain(N, S), [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const double mu = channel_sum(N, C, S, c, [&](int64_t k) { return double(x[k]); }) / count;
      const double v = channel_sum(N, C, S, c, [&](int64_t k) {
                         const double d = double(x[k]) - mu;
                         return d * d;
                       }) / count;
      mean[c] = static_cast<T>(mu);
      var[c] = static_cast<T>(v);
    }
  });
}

template <typename T>
void apply_impl(T* y, const T* x, const T* mean, const T* invstd, const T* w, const T* b,
                int64_t N, int64_t C, int64_t S) {
  std::vector<T> scale(C), shift(C);
  for (int64_t c = 0; c < C; ++c) {
    const double sc = double(invstd[c]) * (w ? double(w[c]) : 1.0);
    scale[c] = static_cast<T>(sc);
    shift[c] = static_cast<T>((b ? double(b[c]) : 0.0) - double(mean[c]) * sc);
  }
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(S, 1));
  parallel_for(0, N * C, grain, [&](int64_t begin, int64_t end) {
    for (int64_t nc = begin; nc < end; ++nc) {
      const T a = scale[nc % C], d = shift[nc % C];
      const T* xr = x + nc * S;
      T* yr = y + nc * S;
      for (int64_t i = 0; i < S; ++i) yr[i] = xr[i] * a + d;
    }
  });
}

template <typename T>
void backward_impl(T* dx, T* dw, T* db, const T* g, const T* x, const T* mean, const T* invstd,
                   const T* w, int64_t N, int64_t C, int64_t S, bool train) {
  const double count = static_cast<double>(N * S);
  parallel_for(0, C, channel_grain(N, S), [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const T mu = mean[c];
      const double is = invstd[c];
      const double sum_g = channel_sum(N, C, S, c, [&](int64_t k) { return double(g[k]); });
      const double sum_gx =
          channel_sum(N, C, S, c, [&](int64_t k) { return double(g[k]) * double(x[k] - mu); });
      if (dw) dw[c] = static_cast<T>(sum_gx * is);
      if (db) db[c] = static_cast<T>(sum_g);
      if (!dx) continue;
      const double wc = w ? double(w[c]) : 1.0;
      // train: dx = (g - mean(g) - (x - mu) * invstd^2 * mean(g * (x - mu))) * invstd * w
      // eval:  dx = g * invstd * w
      const T a = static_cast<T>(is * wc);
      const T k = train ? static_cast<T>(is * is * sum_gx / count) : T(0);
      const T m = train ? static_cast<T>(sum_g / count) : T(0);
      for (int64_t n = 0; n < N; ++n) {
        const int64_t off = (n * C + c) * S;
        for (int64_t i = 0; i < S; ++i) {
          dx[off + i] = (g[off + i] - m - (x[off + i] - mu) * k) * a;
        }
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

}  // namespace ember
