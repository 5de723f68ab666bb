// CPU kernels of ctc_loss: per sample (in parallel over the batch), the alpha recursion in log
// space forward and the beta recursion backward, following Graves et al. (2006) eq. 6-16 with
// 0-based indices. The extended target l' has 2 * S + 1 symbols: blanks at even positions,
// target labels at odd ones.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "kernels/nn/loss_ctc_stubs.h"

namespace ember {
namespace native {
namespace {

template <typename T>
constexpr T kNegInf = -std::numeric_limits<T>::infinity();

// log(exp(a) + exp(b) + exp(c)) for up to three terms that may be -inf.
template <typename T>
inline T log_sum3(T a, T b, T c) {
  T m = std::max(a, std::max(b, c));
  if (m == kNegInf<T>) return kNegInf<T>;
  return std::log(std::exp(a - m) + std::exp(b - m) + std::exp(c - m)) + m;
}

struct Sample {
  const int64_t* tg;  // the sample's labels
  int64_t il, tl;
  int64_t label(int64_t s, int64_t blank) const { return s % 2 == 0 ? blank : tg[s / 2]; }
};

Sample sample_of(const CtcTargets& t, const std::vector<int64_t>& il,
                 const std::vector<int64_t>& tl, int64_t b) {
  return Sample{t.data.data<int64_t>() + t.offsets[b], il[b], tl[b]};
}

template <typename T>
void ctc_forward(T* nll, T* log_alpha, const T* lp, const CtcTargets& targets,
                 const std::vector<int64_t>& il, const std::vector<int64_t>& tl, int64_t blank,
                 int64_t T_max, int64_t N, int64_t C) {
  const int64_t L = 2 * targets.max_length + 1;
  parallel_for(0, N, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const Sample smp = sample_of(targets, il, tl, b);
      T* la = log_alpha + b * T_max * L;
      std::fill(la, la + T_max * L, kNegInf<T>);
      auto lpt = [&](int64_t t, int64_t c) { return lp[(t * N + b) * C + c]; };
      if (smp.il == 0) {
        // No frames: only the empty target has probability 1.
        nll[b] = smp.tl == 0 ? T(0) : std::numeric_limits<T>::infinity();
        continue;
      }
      const int64_t Ls = 2 * smp.tl + 1;
      la[0] = lpt(0, blank);
      if (smp.tl > 0) la[1] = lpt(0, smp.label(1, blank));
      for (int64_t t = 1; t < smp.il; ++t) {
        const T* prev = la + (t - 1) * L;
        T* cur = la + t * L;
        for (int64_t s = 0; s < Ls; ++s) {
          const int64_t c = smp.label(s, blank);
          const T a2 = s > 0 ? prev[s - 1] : kNegInf<T>;
          const T a3 = s > 1 && smp.label(s - 2, blank) != c ? prev[s - 2] : kNegInf<T>;
          const T sum = log_sum3(prev[s], a2, a3);
          cur[s] = sum == kNegInf<T> ? kNegInf<T> : sum + lpt(t, c);
        }
      }
      const T* last = la + (smp.il - 1) * L;
      const T l1 = last[Ls - 1], l2 = smp.tl > 0 ? last[Ls - 2] : kNegInf<T>;
      nll[b] = -log_sum3(l1, l2, kNegInf<T>);
    }
  });
}

template <typename T>
void ctc_backward(T* grad, const T* g_out, const T* lp, const CtcTargets& targets,
                  const std::vector<int64_t>& il, const std::vector<int64_t>& tl, const T* nll,
                  const T* log_alpha, int64_t blank, bool zero_infinity, int64_t T_max, int64_t N,
                  int64_t C) {
  const int64_t L = 2 * targets.max_length + 1;
  parallel_for(0, N, 1, [&](int64_t b0, int64_t b1) {
    std::vector<T> lb(T_max * L), lcab(T_max * C);
    for (int64_t b = b0; b < b1; ++b) {
      const Sample smp = sample_of(targets, il, tl, b);
      auto at = [&](int64_t t, int64_t c) { return (t * N + b) * C + c; };
      const T nl = nll[b];
      const T gr = g_out[b];
      if ((zero_infinity && nl == std::numeric_limits<T>::infinity()) || smp.il == 0) {
        for (int64_t t = 0; t < T_max; ++t) {
          for (int64_t c = 0; c < C; ++c) grad[at(t, c)] = T(0);
        }
        continue;
      }
      const T* la = log_alpha + b * T_max * L;
      const int64_t Ls = 2 * smp.tl + 1;
      std::fill(lb.begin(), lb.end(), kNegInf<T>);
      std::fill(lcab.begin(), lcab.end(), kNegInf<T>);
      // lcab[t][c] = log sum over s with l'(s) = c of alpha_t(s) beta_t(s).
      auto accumulate = [&](int64_t t, int64_t s) {
        const int64_t c = smp.label(s, blank);
        T& acc = lcab[t * C + c];
        acc = log_sum3(acc, la[t * L + s] + lb[t * L + s], kNegInf<T>);
      };
      const int64_t tl_last = smp.il - 1;
      lb[tl_last * L + Ls - 1] = lp[at(tl_last, blank)];
      accumulate(tl_last, Ls - 1);
      if (smp.tl > 0) {
        lb[tl_last * L + Ls - 2] = lp[at(tl_last, smp.label(Ls - 2, blank))];
        accumulate(tl_last, Ls - 2);
      }
      for (int64_t t = smp.il - 2; t >= 0; --t) {
        const T* next = lb.data() + (t + 1) * L;
        T* cur = lb.data() + t * L;
        for (int64_t s = Ls - 1; s >= 0; --s) {
          const int64_t c = smp.label(s, blank);
          const T b2 = s < Ls - 1 ? next[s + 1] : kNegInf<T>;
          const T b3 = s < Ls - 2 && smp.label(s + 2, blank) != c ? next[s + 2] : kNegInf<T>;
          const T sum = log_sum3(next[s], b2, b3);
          cur[s] = sum == kNegInf<T> ? kNegInf<T> : sum + lp[at(t, c)];
          accumulate(t, s);
        }
      }
      for (int64_t t = 0; t < T_max; ++t) {
        for (int64_t c = 0; c < C; ++c) {
          if (t >= smp.il) {
            grad[at(t, c)] = T(0);
            continue;
          }
          const T l = lp[at(t, c)];
          grad[at(t, c)] = (std::exp(l) - std::exp(lcab[t * C + c] + nl - l)) * gr;
        }
      }
    }
  });
}

void ctc_kernel(const Tensor& nll, const Tensor& log_alpha, const Tensor& log_probs,
                const CtcTargets& targets, const std::vector<int64_t>& il,
                const std::vector<int64_t>& tl, int64_t blank) {
  dispatch_dtype<kFloat32 | kFloat64>(log_probs.dtype(), "ctc_loss", [&](auto tag) {
    using T = typename decltype(tag)::type;
    ctc_forward<T>(nll.data<T>(), log_alpha.data<T>(), log_probs.data<T>(), targets, il, tl, blank,
                   log_probs.size(0), log_probs.size(1), log_probs.size(2));
  });
}

void ctc_backward_kernel(const Tensor& grad, const Tensor& grad_out, const Tensor& log_probs,
                         const CtcTargets& targets, const std::vector<int64_t>& il,
                         const std::vector<int64_t>& tl, const Tensor& nll, const Tensor& log_alpha,
                         int64_t blank, bool zero_infinity) {
  dispatch_dtype<kFloat32 | kFloat64>(log_probs.dtype(), "ctc_loss_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    ctc_backward<T>(grad.data<T>(), grad_out.data<T>(), log_probs.data<T>(), targets, il, tl,
                    nll.data<T>(), log_alpha.data<T>(), blank, zero_infinity, log_probs.size(0),
                    log_probs.size(1), log_probs.size(2));
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(ctc_loss_stub, CPU, ctc_kernel);
EMBER_REGISTER_KERNEL(ctc_loss_backward_stub, CPU, ctc_backward_kernel);

}  // namespace native
}  // namespace ember
