// CPU kernels of nll_loss (strided gather / scatter, no copy of the input) and the fused
// cross_entropy (log_softmax of each row of classes, then the loss of the row, with label
// smoothing, class weights, ignore_index or probability targets). float32 / float64.
// Sums run over fixed row blocks added in order: results do not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/nn/row_ops.h"
#include "kernels/nn/loss_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

void check_targets(const int64_t* t, int64_t R, int64_t C, int64_t ignore_index, const char* op) {
  for (int64_t r = 0; r < R; ++r) {
    const int64_t v = t[r];
    if (v != ignore_index && (v < 0 || v >= C)) {
      EMBER_THROW(IndexError, "[", op, "] Target ", v, " is out of bounds.");
    }
  }
}

// ---- nll_loss ---------------------------------------------------------------------------------

template <typename T>
void nll_impl(T* loss, double* loss_sum, double* weight_sum, const T* x, const NllGeometry& g,
              const int64_t* t, const T* w, int64_t ignore_index) {
  const int64_t R = g.N * g.S;
  check_targets(t, R, g.C, ignore_index, "nll_loss");
  const int64_t rows_per_block = 1024;
  const int64_t blocks = (R + rows_per_block - 1) / rows_per_block;
  std::vector<double> ls(blocks, 0.0), ws(blocks, 0.0);
  parallel_for(0, blocks, 16, [&](int64_t b, int64_t e) {
    for (int64_t blk = b; blk < e; ++blk) {
      double sl = 0, sw = 0;
      for (int64_t r = blk * rows_per_block; r < std::min(R, (blk + 1) * rows_per_block); ++r) {
        const int64_t v = t[r];
        T l = T(0);
        if (v != ignore_index) {
          const int64_t n = r / g.S, s = r % g.S;
          const T wt = w ? w[v] : T(1);
          l = -wt * x[n * g.sN + v * g.sC + s * g.sS];
          sw += wt;
        }
        if (loss) loss[r] = l;
        sl += l;
      }
      ls[blk] = sl;
      ws[blk] = sw;
    }
  });
  double a = 0, b = 0;
  for (int64_t blk = 0; blk < blocks; ++blk) {
    a += ls[blk];
    b += ws[blk];
  }
  *loss_sum = a;
  *weight_sum = b;
}

void nll_kernel(const Tensor& loss, double* loss_sum, double* weight_sum, const Tensor& x,
                const NllGeometry& geo, const Tensor& target, const Tensor& weight,
                int64_t ignore_index) {
  dispatch_dtype<kFloat32 | kFloat64>(x.dtype(), "nll_loss", [&](auto tag) {
    using T = typename decltype(tag)::type;
    nll_impl<T>(loss.defined() ? loss.data<T>() : nullptr, loss_sum, weight_sum, x.data<T>(), geo,
                target.data<int64_t>(), weight.defined() ? weight.data<T>() : nullptr,
                ignore_index);
  });
}

void nll_backward_kernel(const Tensor& grad_input, const Tensor& grad, double scale,
                         const Tensor& target, const Tensor& weight, int64_t N, int64_t C,
                         int64_t S, int64_t ignore_index) {
  dispatch_dtype<kFloat32 | kFloat64>(grad_input.dtype(), "nll_loss_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* gi = grad_input.data<T>();
    const T* g = grad.data<T>();
    const int64_t gs = grad.numel() == 1 ? 0 : 1;
    const int64_t* t = target.data<int64_t>();
    const T* w = weight.defined() ? weight.data<T>() : nullptr;
    const int64_t R = N * S;
    parallel_for(0, R, kGrainSize, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t v = t[r];
        if (v == ignore_index || v < 0 || v >= C) continue;
        const int64_t n = r / S, s = r % S;
        gi[(n * C + v) * S + s] = static_cast<T>(-(w ? w[v] : T(1)) * g[r * gs] * scale);
      }
    });
  });
}

// ---- cross_entropy ----------------------------------------------------------------------------
// Per sample (n, s): with the smoothed weights of the classes,
//   index target t: loss = -(1 - ls) w_t lsm_t - ls / C sum_c w_c lsm_c
//                   d loss / d x_c = p_c ((1 - ls) w_t + ls / C sum(w)) - (1 - ls) w_t [c = t]
//                                    - ls / C w_c
//   probabilities:  loss = -sum_c w_c t~_c lsm_c with t~ = t (1 - ls) + ls / C
//                   d loss / d x_c = p_c sum_c' w_c' t~_c' - w_c t~_c,  d loss / d t_c =
//                   -(1 - ls) w_c lsm_c.
// S = 1 (2-D inputs): one row of C classes per sample. S > 1: blocks of up to kBlock adjacent
// samples (columns) of one n are processed together, classes being S apart.

template <typename T>
struct CeArgs {
  const int64_t* ti;  // index targets (N * S) or null
  const T* tp;        // probability targets (N, C, S) or null
  const T* w;         // class weights (C) or null
  int64_t N, C, S;
  T keep, smooth;  // 1 - ls, ls / C
  int64_t ignore_index;
  T weight(int64_t c) const { return w ? w[c] : T(1); }
};

// S = 1: one contiguous row of classes per sample. Its log_softmax is never stored: lsm_c =
// x_c - lse, with lse = logsumexp(x) the one number per sample the backward keeps (on a
// language model's 4096 x 8192 logits a stored log_softmax was 128 MB written and read back,
// most of the loss's time).
template <typename T>
EMBER_NN_FLATTEN double ce_forward_row(const CeArgs<T>& a, const T* x, T* lse_out, T* loss) {
  const int64_t C = a.C;
  const T lse = nn_rows::logsumexp(x, C);
  *lse_out = lse;
  if (a.tp) {
    *loss = -nn_rows::sum<T>(
        C, [&](int64_t c) { return a.weight(c) * (a.tp[c] * a.keep + a.smooth) * (x[c] - lse); });
    return 0;
  }
  const int64_t v = *a.ti;
  if (v == a.ignore_index) {
    *loss = T(0);
    return 0;
  }
  const T wt = a.weight(v);
  T l = -a.keep * wt * (x[v] - lse);
  if (a.smooth != T(0)) {
    l -= a.smooth * (a.w ? nn_rows::sum<T>(C, [&](int64_t c) { return a.w[c] * (x[c] - lse); })
                         : nn_rows::sum<T>(C, [&](int64_t c) { return x[c] - lse; }));
  }
  *loss = l;
  return wt;
}

template <typename T>
EMBER_NN_FLATTEN void ce_backward_row(const CeArgs<T>& a, T gr, const T* x, T lse, T* gi, T* gt,
                                      T w_total) {
  const int64_t C = a.C;
  if (a.tp) {
    const T* tr = a.tp;
    const T P =
        nn_rows::sum<T>(C, [&](int64_t c) { return a.weight(c) * (tr[c] * a.keep + a.smooth); });
    if (gi) {
      for (int64_t c = 0; c < C; ++c) {
        gi[c] = gr * (vmath::exp(x[c] - lse) * P - a.weight(c) * (tr[c] * a.keep + a.smooth));
      }
    }
    if (gt) {
      for (int64_t c = 0; c < C; ++c) gt[c] = -gr * a.keep * a.weight(c) * (x[c] - lse);
    }
    return;
  }
  const int64_t v = *a.ti;
  if (v == a.ignore_index) {
    std::fill(gi, gi + C, T(0));
    return;
  }
  const T wt = a.weight(v);
  const T P = gr * (a.keep * wt + a.smooth * w_total), Q = gr * a.smooth;
  if (a.w) {
    for (int64_t c = 0; c < C; ++c) gi[c] = vmath::exp(x[c] - lse) * P - a.w[c] * Q;
  } else {
    for (int64_t c = 0; c < C; ++c) gi[c] = vmath::exp(x[c] - lse) * P - Q;
  }
  gi[v] -= gr * a.keep * wt;
}

// Forward for the samples (n, s0 .. s0 + L) (L = 1 when S = 1): their lse (at n * S + s0) and
// loss; returns the samples' total target weight.
template <typename T>
EMBER_NN_FLATTEN double ce_forward_block(const CeArgs<T>& a, const T* x, T* lse, T* loss, int64_t n,
                                         int64_t s0, int64_t L) {
  const int64_t C = a.C, S = a.S;
  const int64_t base = n * C * S + s0;
  if (S == 1) {
    CeArgs<T> row = a;
    if (row.ti) row.ti += n;
    if (row.tp) row.tp += base;
    return ce_forward_row(row, x + base, lse + n, loss + n);
  }
  T* ls = lse + n * S + s0;
  nn_rows::logsumexp_columns(x + base, C, S, L, ls);
  T acc[nn_rows::kBlock], wsum[nn_rows::kBlock];
  double total = 0;
  if (a.tp) {
    for (int64_t j = 0; j < L; ++j) acc[j] = 0;
    for (int64_t c = 0; c < C; ++c) {
      const T wc = a.weight(c);
      const T* xr = x + base + c * S;
      const T* tr = a.tp + base + c * S;
      for (int64_t j = 0; j < L; ++j) acc[j] += wc * (tr[j] * a.keep + a.smooth) * (xr[j] - ls[j]);
    }
    for (int64_t j = 0; j < L; ++j) loss[n * S + s0 + j] = -acc[j];
    return 0;
  }
  if (a.smooth != T(0)) {
    for (int64_t j = 0; j < L; ++j) wsum[j] = 0;
    for (int64_t c = 0; c < C; ++c) {
      const T wc = a.weight(c);
      const T* xr = x + base + c * S;
      for (int64_t j = 0; j < L; ++j) wsum[j] += wc * (xr[j] - ls[j]);
    }
  }
  for (int64_t j = 0; j < L; ++j) {
    const int64_t v = a.ti[n * S + s0 + j];
    if (v == a.ignore_index) {
      loss[n * S + s0 + j] = T(0);
      continue;
    }
    const T wt = a.weight(v);
    T l = -a.keep * wt * (x[base + v * S + j] - ls[j]);
    if (a.smooth != T(0)) l -= a.smooth * wsum[j];
    loss[n * S + s0 + j] = l;
    total += wt;
  }
  return total;
}

template <typename T>
EMBER_NN_FLATTEN void ce_backward_block(const CeArgs<T>& a, const T* g, int64_t gs, T scale,
                                        const T* x, const T* lse, T* gi, T* gt, T w_total,
                                        int64_t n, int64_t s0, int64_t L) {
  const int64_t C = a.C, S = a.S;
  const int64_t base = n * C * S + s0;
  if (S == 1) {
    CeArgs<T> row = a;
    if (row.ti) row.ti += n;
    if (row.tp) row.tp += base;
    ce_backward_row(row, static_cast<T>(g[n * gs] * scale), x + base, lse[n],
                    gi ? gi + base : nullptr, gt ? gt + base : nullptr, w_total);
    return;
  }
  const T* ls = lse + n * S + s0;
  // Per sample: gi_c = exp(lsm_c) * P - w_c * Q (index targets, then the target's own term).
  T P[nn_rows::kBlock], Q[nn_rows::kBlock], gr[nn_rows::kBlock];
  for (int64_t j = 0; j < L; ++j) gr[j] = g[(n * S + s0 + j) * gs] * scale;
  if (a.tp) {
    for (int64_t j = 0; j < L; ++j) P[j] = 0;
    for (int64_t c = 0; c < C; ++c) {
      const T wc = a.weight(c);
      const T* tr = a.tp + base + c * S;
      for (int64_t j = 0; j < L; ++j) P[j] += wc * (tr[j] * a.keep + a.smooth);
    }
    for (int64_t c = 0; c < C; ++c) {
      const T wc = a.weight(c);
      const T* xr = x + base + c * S;
      const T* tr = a.tp + base + c * S;
      if (gi) {
        T* out = gi + base + c * S;
        for (int64_t j = 0; j < L; ++j) {
          out[j] = gr[j] * (vmath::exp(xr[j] - ls[j]) * P[j] - wc * (tr[j] * a.keep + a.smooth));
        }
      }
      if (gt) {
        T* out = gt + base + c * S;
        for (int64_t j = 0; j < L; ++j) out[j] = -gr[j] * a.keep * wc * (xr[j] - ls[j]);
      }
    }
    return;
  }
  for (int64_t j = 0; j < L; ++j) {
    const int64_t v = a.ti[n * S + s0 + j];
    const bool ignored = v == a.ignore_index;
    const T wt = ignored ? T(0) : a.weight(v);
    P[j] = ignored ? T(0) : gr[j] * (a.keep * wt + a.smooth * w_total);
    Q[j] = ignored ? T(0) : gr[j] * a.smooth;
  }
  for (int64_t c = 0; c < C; ++c) {
    const T wc = a.weight(c);
    const T* xr = x + base + c * S;
    T* out = gi + base + c * S;
    for (int64_t j = 0; j < L; ++j) out[j] = vmath::exp(xr[j] - ls[j]) * P[j] - wc * Q[j];
  }
  for (int64_t j = 0; j < L; ++j) {
    const int64_t v = a.ti[n * S + s0 + j];
    if (v != a.ignore_index) gi[base + v * S + j] -= gr[j] * a.keep * a.weight(v);
  }
}

// Runs body(n, s0, L) over every block of samples, in parallel over fixed chunks; returns the
// per-chunk results of body summed in order.
template <typename F>
double for_sample_blocks(int64_t N, int64_t C, int64_t S, const F& body) {
  const int64_t L = S == 1 ? 1 : nn_rows::kBlock;
  const int64_t per_n = (S + L - 1) / L;
  const int64_t units = N * per_n;
  const int64_t unit_cost = C * std::min(S, L);
  const int64_t per_chunk = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(unit_cost, 1));
  const int64_t chunks = (units + per_chunk - 1) / per_chunk;
  std::vector<double> partial(chunks, 0.0);
  parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t ch = b; ch < e; ++ch) {
      double acc = 0;
      for (int64_t u = ch * per_chunk; u < std::min(units, (ch + 1) * per_chunk); ++u) {
        const int64_t n = u / per_n, s0 = (u % per_n) * L;
        acc += body(n, s0, std::min(L, S - s0));
      }
      partial[ch] = acc;
    }
  });
  double total = 0;
  for (double p : partial) total += p;
  return total;
}

template <typename T>
CeArgs<T> ce_args(const Tensor& target, const Tensor& weight, const ClassGeometry& geo, double ls,
                  int64_t ignore_index, bool prob) {
  return CeArgs<T>{prob ? nullptr : target.data<int64_t>(),
                   prob ? target.data<T>() : nullptr,
                   weight.defined() ? weight.data<T>() : nullptr,
                   geo.N,
                   geo.C,
                   geo.S,
                   static_cast<T>(1.0 - ls),
                   static_cast<T>(ls / geo.C),
                   ignore_index};
}

void cross_entropy_kernel(const Tensor& lse, const Tensor& loss, double* weight_sum,
                          const Tensor& x, const Tensor& target, const Tensor& weight,
                          const ClassGeometry& geo, double label_smoothing, int64_t ignore_index,
                          bool prob_target) {
  if (!prob_target) {
    check_targets(target.data<int64_t>(), geo.N * geo.S, geo.C, ignore_index, "cross_entropy");
  }
  dispatch_dtype<kFloat32 | kFloat64>(x.dtype(), "cross_entropy", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const CeArgs<T> a = ce_args<T>(target, weight, geo, label_smoothing, ignore_index, prob_target);
    const T* xp = x.data<T>();
    T* lp = lse.data<T>();
    T* out = loss.data<T>();
    *weight_sum = for_sample_blocks(geo.N, geo.C, geo.S, [&](int64_t n, int64_t s0, int64_t L) {
      return ce_forward_block(a, xp, lp, out, n, s0, L);
    });
  });
}

void cross_entropy_backward_kernel(const Tensor& gi, const Tensor& gt, const Tensor& grad,
                                   double scale, const Tensor& x, const Tensor& lse,
                                   const Tensor& target, const Tensor& weight,
                                   const ClassGeometry& geo, double label_smoothing,
                                   int64_t ignore_index, bool prob_target) {
  dispatch_dtype<kFloat32 | kFloat64>(x.dtype(), "cross_entropy_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const CeArgs<T> a = ce_args<T>(target, weight, geo, label_smoothing, ignore_index, prob_target);
    T w_total = static_cast<T>(geo.C);
    if (a.w)
      w_total = static_cast<T>(nn_rows::sum_blocked<T>(geo.C, [&](int64_t c) { return a.w[c]; }));
    const T* g = grad.data<T>();
    const int64_t gs = grad.numel() == 1 ? 0 : 1;
    T* gip = gi.defined() ? gi.data<T>() : nullptr;
    T* gtp = gt.defined() ? gt.data<T>() : nullptr;
    for_sample_blocks(geo.N, geo.C, geo.S, [&](int64_t n, int64_t s0, int64_t L) {
      ce_backward_block(a, g, gs, static_cast<T>(scale), x.data<T>(), lse.data<T>(), gip, gtp,
                        w_total, n, s0, L);
      return 0.0;
    });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(nll_loss_stub, CPU, nll_kernel);
EMBER_REGISTER_KERNEL(nll_loss_backward_stub, CPU, nll_backward_kernel);
EMBER_REGISTER_KERNEL(cross_entropy_stub, CPU, cross_entropy_kernel);
EMBER_REGISTER_KERNEL(cross_entropy_backward_stub, CPU, cross_entropy_backward_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
