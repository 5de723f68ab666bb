// CPU kernels of nll_loss (strided gather / scatter, no copy of the input) and the fused
// cross_entropy (log_softmax of each row of classes, then the loss of the row, with label
// smoothing, class weights, ignore_index or probability targets). float32 / float64.
// Sums run over fixed row blocks added in order: results do not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/nn_row_ops.h"
#include "ops/nn_loss.h"

namespace ember {
namespace {

void check_targets(const int64_t* t, int64_t R, int64_t C, int64_t ignore_index, const char* op) {
  for (int64_t r = 0; r < R; ++r) {
    const int64_t v = t[r];
    if (v != ignore_index && (v < 0 || v >= C)) {
      EMBER_THROW(IndexError, "[", op, "] Target ", v, " is out of bounds.");
    }
  }
}

// Runs body(blk, r0, r1) over fixed blocks of rows in parallel; returns the block count.
template <typename F>
int64_t for_row_blocks(int64_t R, int64_t row_cost, const F& body) {
  const int64_t rows_per_block = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(row_cost, 1));
  const int64_t blocks = (R + rows_per_block - 1) / rows_per_block;
  parallel_for(0, blocks, 1, [&](int64_t b, int64_t e) {
    for (int64_t blk = b; blk < e; ++blk) {
      body(blk, blk * rows_per_block, std::min(R, (blk + 1) * rows_per_block));
    }
  });
  return blocks;
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

template <typename T>
void ce_impl(T* lsm, T* loss, double* weight_sum, const T* x, const int64_t* ti, const T* tp,
             const T* w, int64_t R, int64_t C, double ls, int64_t ignore_index) {
  if (ti) check_targets(ti, R, C, ignore_index, "cross_entropy");
  const T smooth = static_cast<T>(ls / C), keep = static_cast<T>(1.0 - ls);
  std::vector<double> partial(R + 1);
  const int64_t blocks = for_row_blocks(R, C, [&](int64_t blk, int64_t r0, int64_t r1) {
    double sw = 0;
    for (int64_t r = r0; r < r1; ++r) {
      const T* xr = x + r * C;
      T* lr = lsm + r * C;
      nn_rows::softmax(xr, lr, C, /*log=*/true);
      if (tp) {
        // -sum_c w_c * t~_c * lsm_c with the smoothed target t~ = t (1 - ls) + ls / C.
        const T* tr = tp + r * C;
        loss[r] = -nn_rows::sum<T>(C, [&](int64_t c) {
          return (w ? w[c] : T(1)) * (tr[c] * keep + smooth) * lr[c];
        });
        continue;
      }
      const int64_t v = ti[r];
      if (v == ignore_index) {
        loss[r] = T(0);
        continue;
      }
      const T wt = w ? w[v] : T(1);
      T l = -keep * wt * lr[v];
      if (ls > 0) {
        l -= smooth * nn_rows::sum<T>(C, [&](int64_t c) { return (w ? w[c] : T(1)) * lr[c]; });
      }
      loss[r] = l;
      sw += wt;
    }
    partial[blk] = sw;
  });
  double s = 0;
  for (int64_t blk = 0; blk < blocks; ++blk) s += partial[blk];
  *weight_sum = s;
}

template <typename T>
void ce_backward_impl(T* gi, T* gt, const T* g, int64_t gs, double scale, const T* lsm,
                      const int64_t* ti, const T* tp, const T* w, int64_t R, int64_t C, double ls,
                      int64_t ignore_index) {
  const T smooth = static_cast<T>(ls / C), keep = static_cast<T>(1.0 - ls);
  const T w_total = w ? nn_rows::sum<T>(C, [&](int64_t c) { return w[c]; }) : static_cast<T>(C);
  for_row_blocks(R, C, [&](int64_t, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T gr = static_cast<T>(g[r * gs] * scale);
      const T* lr = lsm + r * C;
      T* gir = gi ? gi + r * C : nullptr;
      if (tp) {
        const T* tr = tp + r * C;
        if (gir) {
          const T sw = nn_rows::sum<T>(C, [&](int64_t c) {
            return (w ? w[c] : T(1)) * (tr[c] * keep + smooth);
          });
          for (int64_t c = 0; c < C; ++c) {
            const T wc = w ? w[c] : T(1);
            gir[c] = gr * (vmath::exp(lr[c]) * sw - wc * (tr[c] * keep + smooth));
          }
        }
        if (gt) {
          T* gtr = gt + r * C;
          for (int64_t c = 0; c < C; ++c) gtr[c] = -gr * keep * (w ? w[c] : T(1)) * lr[c];
        }
        continue;
      }
      const int64_t v = ti[r];
      if (v == ignore_index) {
        std::fill(gir, gir + C, T(0));
        continue;
      }
      const T wt = w ? w[v] : T(1);
      // d loss / d x_c = p_c * ((1 - ls) w_t + ls / C * sum(w)) - (1 - ls) w_t [c = t] - ls / C w_c
      const T a = keep * wt + smooth * w_total;
      for (int64_t c = 0; c < C; ++c) {
        gir[c] = gr * (vmath::exp(lr[c]) * a - smooth * (w ? w[c] : T(1)));
      }
      gir[v] -= gr * keep * wt;
    }
  });
}

void cross_entropy_kernel(const Tensor& lsm, const Tensor& loss, double* weight_sum,
                          const Tensor& x, const Tensor& target, const Tensor& weight,
                          double label_smoothing, int64_t ignore_index, bool prob_target) {
  dispatch_dtype<kFloat32 | kFloat64>(x.dtype(), "cross_entropy", [&](auto tag) {
    using T = typename decltype(tag)::type;
    ce_impl<T>(lsm.data<T>(), loss.data<T>(), weight_sum, x.data<T>(),
               prob_target ? nullptr : target.data<int64_t>(),
               prob_target ? target.data<T>() : nullptr,
               weight.defined() ? weight.data<T>() : nullptr, x.size(0), x.size(1),
               label_smoothing, ignore_index);
  });
}

void cross_entropy_backward_kernel(const Tensor& gi, const Tensor& gt, const Tensor& grad,
                                   double scale, const Tensor& lsm, const Tensor& target,
                                   const Tensor& weight, double label_smoothing,
                                   int64_t ignore_index, bool prob_target) {
  dispatch_dtype<kFloat32 | kFloat64>(lsm.dtype(), "cross_entropy_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    ce_backward_impl<T>(gi.defined() ? gi.data<T>() : nullptr,
                        gt.defined() ? gt.data<T>() : nullptr, grad.data<T>(),
                        grad.numel() == 1 ? 0 : 1, scale, lsm.data<T>(),
                        prob_target ? nullptr : target.data<int64_t>(),
                        prob_target ? target.data<T>() : nullptr,
                        weight.defined() ? weight.data<T>() : nullptr, lsm.size(0), lsm.size(1),
                        label_smoothing, ignore_index);
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(nll_loss_stub, CPU, nll_kernel);
EMBER_REGISTER_KERNEL(nll_loss_backward_stub, CPU, nll_backward_kernel);
EMBER_REGISTER_KERNEL(cross_entropy_stub, CPU, cross_entropy_kernel);
EMBER_REGISTER_KERNEL(cross_entropy_backward_stub, CPU, cross_entropy_backward_kernel);

}  // namespace ember
