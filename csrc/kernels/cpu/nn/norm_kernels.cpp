// CPU kernels of layer_norm / rms_norm (rows of a (M, N) matrix) and group_norm (contiguous
// (N, C, HW) data, a group being C / G adjacent channels, i.e. one contiguous run). float32 /
// float64; statistics are accumulated in double. Parameter gradients are reduced over fixed row
// blocks and then summed in block order, so results do not depend on the number of threads.
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

template <typename T>
const T* ptr_or_null(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}
template <typename T>
T* mut_ptr_or_null(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

// ---- layer_norm / rms_norm ------------------------------------------------------------------

template <typename T>
void layer_norm_impl(T* y, T* mean, T* rstd, const T* x, const T* w, const T* b, int64_t M,
                     int64_t N, double eps, bool rms) {
  const int64_t grain = std::max<int64_t>(1, kGrainSize / N);
  parallel_for(0, M, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* xr = x + r * N;
      T* yr = y + r * N;
      double mu = 0, var;
      if (rms) {
        var = nn_rows::sum_squares(xr, N) / N;
      } else {
        nn_rows::moments_contiguous(xr, N, mu, var);
        mean[r] = static_cast<T>(mu);
      }
      const double rs = 1.0 / std::sqrt(var + eps);
      rstd[r] = static_cast<T>(rs);
      nn_rows::normalize_affine(xr, yr, N, static_cast<T>(rs), static_cast<T>(-mu * rs), w, b);
    }
  });
}

// Row blocks for the parameter-gradient reduction: a fixed count (not the thread count).
constexpr int64_t kParamBlocks = 32;

// One row of the backward: dx = rstd * (dy - mean(dy) - xhat * mean(dy * xhat)), dy = g * w,
// and the row's terms of dw (g * xhat) and db (g) added to accw / accb (when given).
template <typename T, bool kHasW>
inline void layer_norm_backward_row(T* dx, T* accw, T* accb, const T* g, const T* x, T mu, T rs,
                                    const T* w, int64_t N, bool rms) {
  if (dx) {
    const double sdy =
        nn_rows::sum_blocked<T>(N, [&](int64_t i) { return kHasW ? g[i] * w[i] : g[i]; });
    const double sdyx =
        nn_rows::sum_blocked<T>(N, [&](int64_t i) { return (kHasW ? g[i] * w[i] : g[i]) * x[i]; });
    // mean(dy * xhat) = rstd * (sum(dy x) - mu sum(dy)) / N.
    const T a = rms ? T(0) : static_cast<T>(sdy / N);
    const T c = static_cast<T>(double(rs) * (sdyx - double(mu) * sdy) / N);
    for (int64_t i = 0; i < N; ++i) {
      const T dy = kHasW ? g[i] * w[i] : g[i];
      dx[i] = rs * (dy - a - (x[i] - mu) * rs * c);
    }
  }
  if (accw) {
    for (int64_t i = 0; i < N; ++i) accw[i] += g[i] * ((x[i] - mu) * rs);
  }
  if (accb) {
    for (int64_t i = 0; i < N; ++i) accb[i] += g[i];
  }
}

template <typename T>
void layer_norm_backward_impl(T* dx, T* dw, T* db, const T* g, const T* x, const T* mean,
                              const T* rstd, const T* w, int64_t M, int64_t N, bool rms) {
  const int64_t blocks = std::min(M, kParamBlocks);
  std::vector<T> pw(dw ? blocks * N : 0, T(0)), pb(db ? blocks * N : 0, T(0));
  parallel_for(0, blocks, 1, [&](int64_t bb, int64_t be) {
    for (int64_t blk = bb; blk < be; ++blk) {
      T* accw = dw ? pw.data() + blk * N : nullptr;
      T* accb = db ? pb.data() + blk * N : nullptr;
      for (int64_t r = M * blk / blocks; r < M * (blk + 1) / blocks; ++r) {
        const T mu = rms ? T(0) : mean[r];
        T* dxr = dx ? dx + r * N : nullptr;
        if (w) {
          layer_norm_backward_row<T, true>(dxr, accw, accb, g + r * N, x + r * N, mu, rstd[r], w, N,
                                           rms);
        } else {
          layer_norm_backward_row<T, false>(dxr, accw, accb, g + r * N, x + r * N, mu, rstd[r], w,
                                            N, rms);
        }
      }
    }
  });
  auto finish = [&](T* out, const std::vector<T>& part) {
    if (!out) return;
    for (int64_t i = 0; i < N; ++i) {
      double s = 0;
      for (int64_t blk = 0; blk < blocks; ++blk) s += part[blk * N + i];
      out[i] = static_cast<T>(s);
    }
  };
  finish(dw, pw);
  finish(db, pb);
}

void layer_norm_kernel(const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& x,
                       const Tensor& w, const Tensor& b, int64_t M, int64_t N, double eps,
                       bool rms) {
  dispatch_dtype<kFloat32 | kFloat64>(x.dtype(), rms ? "rms_norm" : "layer_norm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    layer_norm_impl<T>(out.data<T>(), mut_ptr_or_null<T>(mean), rstd.data<T>(), x.data<T>(),
                       ptr_or_null<T>(w), ptr_or_null<T>(b), M, N, eps, rms);
  });
}

void layer_norm_backward_kernel(const Tensor& dx, const Tensor& dw, const Tensor& db,
                                const Tensor& g, const Tensor& x, const Tensor& mean,
                                const Tensor& rstd, const Tensor& w, int64_t M, int64_t N,
                                bool rms) {
  dispatch_dtype<kFloat32 | kFloat64>(x.dtype(), "layer_norm_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    layer_norm_backward_impl<T>(mut_ptr_or_null<T>(dx), mut_ptr_or_null<T>(dw),
                                mut_ptr_or_null<T>(db), g.data<T>(), x.data<T>(),
                                ptr_or_null<T>(mean), rstd.data<T>(), ptr_or_null<T>(w), M, N, rms);
  });
}

// ---- group_norm -----------------------------------------------------------------------------

template <typename T>
void group_norm_impl(T* y, T* mean, T* rstd, const T* x, const T* w, const T* b, int64_t N,
                     int64_t C, int64_t HW, int64_t G, double eps) {
  const int64_t Cg = C / G, len = Cg * HW;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(len, 1));
  parallel_for(0, N * G, grain, [&](int64_t begin, int64_t end) {
    for (int64_t ng = begin; ng < end; ++ng) {
      const T* xg = x + ng * len;
      T* yg = y + ng * len;
      double mu, var;
      nn_rows::moments<T>(
          len, [&](int64_t i) { return xg[i]; }, mu, var);
      const double rs = 1.0 / std::sqrt(var + eps);
      mean[ng] = static_cast<T>(mu);
      rstd[ng] = static_cast<T>(rs);
      const int64_t c0 = (ng % G) * Cg;
      for (int64_t c = 0; c < Cg; ++c) {
        const double wc = w ? double(w[c0 + c]) : 1.0;
        const T scale = static_cast<T>(rs * wc);
        const T shift = static_cast<T>((b ? double(b[c0 + c]) : 0.0) - mu * rs * wc);
        const T* xc = xg + c * HW;
        T* yc = yg + c * HW;
        for (int64_t i = 0; i < HW; ++i) yc[i] = xc[i] * scale + shift;
      }
    }
  });
}

template <typename T>
void group_norm_backward_impl(T* dx, T* dw, T* db, const T* g, const T* x, const T* mean,
                              const T* rstd, const T* w, int64_t N, int64_t C, int64_t HW,
                              int64_t G) {
  const int64_t Cg = C / G;
  // Per (n, c): ds = sum(g * x), dbs = sum(g) over HW.
  std::vector<double> ds(N * C), dbs(N * C);
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(HW, 1));
  parallel_for(0, N * C, grain, [&](int64_t begin, int64_t end) {
    for (int64_t nc = begin; nc < end; ++nc) {
      const T* gc = g + nc * HW;
      const T* xc = x + nc * HW;
      ds[nc] = nn_rows::sum_blocked<T>(HW, [&](int64_t i) { return gc[i] * xc[i]; });
      dbs[nc] = nn_rows::sum_blocked<T>(HW, [&](int64_t i) { return gc[i]; });
    }
  });
  if (dx) {
    const double s = 1.0 / static_cast<double>(Cg * HW);
    parallel_for(0, N * G, std::max<int64_t>(1, grain / std::max<int64_t>(Cg, 1)),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t ng = begin; ng < end; ++ng) {
                     const int64_t n = ng / G, c0 = (ng % G) * Cg;
                     double ds_g = 0, db_g = 0;
                     for (int64_t c = 0; c < Cg; ++c) {
                       const double wc = w ? double(w[c0 + c]) : 1.0;
                       ds_g += ds[n * C + c0 + c] * wc;
                       db_g += dbs[n * C + c0 + c] * wc;
                     }
                     const double mu = mean[ng], rs = rstd[ng];
                     const double c2 = (db_g * mu - ds_g) * rs * rs * rs * s;
                     const double c3 = -c2 * mu - db_g * rs * s;
                     for (int64_t c = 0; c < Cg; ++c) {
                       const T a = static_cast<T>(rs * (w ? double(w[c0 + c]) : 1.0));
                       const T b2 = static_cast<T>(c2), b3 = static_cast<T>(c3);
                       const int64_t off = (n * C + c0 + c) * HW;
                       for (int64_t i = 0; i < HW; ++i)
                         dx[off + i] = a * g[off + i] + b2 * x[off + i] + b3;
                     }
                   }
                 });
  }
  for (int64_t c = 0; c < C; ++c) {
    double sw = 0, sb = 0;
    for (int64_t n = 0; n < N; ++n) {
      const int64_t ng = n * G + c / Cg;
      sw += (ds[n * C + c] - dbs[n * C + c] * double(mean[ng])) * double(rstd[ng]);
      sb += dbs[n * C + c];
    }
    if (dw) dw[c] = static_cast<T>(sw);
    if (db) db[c] = static_cast<T>(sb);
  }
}

void group_norm_kernel(const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& x,
                       const Tensor& w, const Tensor& b, int64_t N, int64_t C, int64_t HW,
                       int64_t G, double eps) {
  dispatch_dtype<kFloat32 | kFloat64>(x.dtype(), "group_norm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    group_norm_impl<T>(out.data<T>(), mean.data<T>(), rstd.data<T>(), x.data<T>(),
                       ptr_or_null<T>(w), ptr_or_null<T>(b), N, C, HW, G, eps);
  });
}

void group_norm_backward_kernel(const Tensor& dx, const Tensor& dw, const Tensor& db,
                                const Tensor& g, const Tensor& x, const Tensor& mean,
                                const Tensor& rstd, const Tensor& w, int64_t N, int64_t C,
                                int64_t HW, int64_t G) {
  dispatch_dtype<kFloat32 | kFloat64>(x.dtype(), "group_norm_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    group_norm_backward_impl<T>(mut_ptr_or_null<T>(dx), mut_ptr_or_null<T>(dw),
                                mut_ptr_or_null<T>(db), g.data<T>(), x.data<T>(), mean.data<T>(),
                                rstd.data<T>(), ptr_or_null<T>(w), N, C, HW, G);
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(layer_norm_stub, CPU, layer_norm_kernel);
EMBER_REGISTER_KERNEL(layer_norm_backward_stub, CPU, layer_norm_backward_kernel);
EMBER_REGISTER_KERNEL(group_norm_stub, CPU, group_norm_kernel);
EMBER_REGISTER_KERNEL(group_norm_backward_stub, CPU, group_norm_backward_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
