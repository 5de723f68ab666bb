// CPU kernels of the fused optimizer steps (Note [Fused Optimizer Steps] in ops/optim_steps.cpp).
// Each kernel updates one parameter and its state in a single pass over contiguous memory, in
// parallel chunks for large tensors. The element formulas spell out PyTorch's single-tensor
// implementation op by op, in the same order (lerp, then mul + addcmul, then addcdiv, ...), in the
// accumulation type A: float for float16/bfloat16/float32, double for float64. Values that
// PyTorch stores in a state tensor and reads back are rounded to the storage type (`stored`), so
// float16/bfloat16 states round exactly where PyTorch's do.
#include <cmath>
#include <type_traits>

#include "core/half.h"
#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "ops/optim_steps.h"

namespace ember {
namespace optim {
namespace {

// An update touches 3-6 arrays with ~10-20 flops per element: worth a thread above this size.
constexpr int64_t kOptimGrain = 16384;

// The arrays of one slot never overlap (SlotGuard in ops/optim_steps.cpp makes sure), hence
// `#pragma GCC ivdep` on every loop: without it GCC versions the loop with runtime alias checks
// and falls back to scalar code when there are too many array pairs (Adam with amsgrad).
// The loops capture by value ([=]): constants held in the closure's own copies are provably not
// modified by the loop's stores, so GCC keeps them in registers and vectorises the loop (with
// [&] it reloads them every iteration and gives up).
template <typename F>
void for_chunks(int64_t n, const F& f) {
  parallel_for(0, n, kOptimGrain, f);
}

// The value a state tensor of type T holds after storing v (identity for float and double).
template <typename T, typename A>
inline A stored(A v) {
  if constexpr (std::is_same_v<T, A>) {
    return v;
  } else {
    return static_cast<A>(static_cast<T>(v));
  }
}

// torch.lerp's formula (exact at both ends of [0, 1]); `small` is |weight| < 0.5, hoisted out of
// the loop by the caller.
template <typename A>
inline A lerp(A self, A end, A weight, bool small) {
  return small ? self + weight * (end - self) : end - (end - self) * (A(1) - weight);
}

// torch.maximum: NaN in either operand propagates.
template <typename A>
inline A maximum(A a, A b) {
  return std::isnan(a) ? a : (std::isnan(b) ? b : (a > b ? a : b));
}

// The gradient as the update sees it: negated with maximize, plus coupled (L2) weight decay.
// Selects, not branches: the loops below must stay free of control flow to vectorise (a flag
// that decides whether a state array is read or written is a template parameter instead).
template <typename A>
inline A effective_grad(A g, A param, bool maximize, bool coupled_decay, A weight_decay) {
  const A d = maximize ? -g : g;
  return coupled_decay ? d + weight_decay * param : d;
}

// Calls f(std::bool_constant<b>{}): turns a runtime flag into a compile-time one.
template <typename F>
void with_flag(bool b, const F& f) {
  if (b) {
    f(std::true_type{});
  } else {
    f(std::false_type{});
  }
}

template <typename T, bool kMomentum, bool kInitBuffer>
void sgd_loop(const OptimSlot& s, const SgdCoeffs& c) {
  using A = acc_type<T>;
  T* p = s.param.data<T>();
  const T* g = s.grad.data<T>();
  T* buf = kMomentum ? s.state[0].data<T>() : nullptr;
  const A wd = A(c.weight_decay), mom = A(c.momentum), keep = A(1 - c.dampening),
          neg_lr = A(-c.lr);
  const bool decay = c.weight_decay != 0, maximize = c.maximize, nesterov = c.nesterov;
  for_chunks(s.param.numel(), [=](int64_t begin, int64_t end) {
#pragma GCC ivdep
    for (int64_t k = begin; k < end; ++k) {
      const A pk = A(p[k]);
      A d = effective_grad(A(g[k]), pk, maximize, decay, wd);
      if constexpr (kMomentum) {
        // First step: buf = clone(grad); then buf = buf * momentum + (1 - dampening) * grad.
        A b;
        if constexpr (kInitBuffer) {
          b = stored<T>(d);
        } else {
          b = stored<T>(A(buf[k]) * mom + keep * d);
        }
        buf[k] = T(b);
        d = nesterov ? d + mom * b : b;
      }
      p[k] = T(pk + neg_lr * d);
    }
  });
}

template <typename T>
void sgd_impl(const OptimSlot& s, const SgdCoeffs& c) {
  if (c.momentum == 0) return sgd_loop<T, false, false>(s, c);
  with_flag(c.init_buffer, [&](auto init) { sgd_loop<T, true, decltype(init)::value>(s, c); });
}

template <typename T, bool kAmsgrad>
void adam_loop(const OptimSlot& s, const AdamCoeffs& c) {
  using A = acc_type<T>;
  T* p = s.param.data<T>();
  const T* g = s.grad.data<T>();
  T* exp_avg = s.state[0].data<T>();
  T* exp_avg_sq = s.state[1].data<T>();
  T* max_sq = kAmsgrad ? s.state[2].data<T>() : nullptr;
  const A wd = A(c.weight_decay), decay_factor = A(1 - c.lr * c.weight_decay);
  const A w1 = A(1 - c.beta1), b2 = A(c.beta2), w2 = A(1 - c.beta2);
  const A bc2_sqrt = A(c.bias_correction2_sqrt), eps = A(c.eps), neg_step = A(-c.step_size);
  const bool decay = c.weight_decay != 0, decoupled = decay && c.decoupled_weight_decay,
             coupled = decay && !c.decoupled_weight_decay, maximize = c.maximize,
             small = std::abs(w1) < A(0.5);
  for_chunks(s.param.numel(), [=](int64_t begin, int64_t end) {
#pragma GCC ivdep
    for (int64_t k = begin; k < end; ++k) {
      A pk = A(p[k]);
      pk = decoupled ? stored<T>(pk * decay_factor) : pk;
      const A d = effective_grad(A(g[k]), pk, maximize, coupled, wd);
      const A m = stored<T>(lerp(A(exp_avg[k]), d, w1, small));
      const A v = stored<T>(stored<T>(A(exp_avg_sq[k]) * b2) + w2 * d * d);
      exp_avg[k] = T(m);
      exp_avg_sq[k] = T(v);
      A vhat = v;
      if constexpr (kAmsgrad) {
        vhat = maximum(A(max_sq[k]), v);
        max_sq[k] = T(vhat);
      }
      const A denom = std::sqrt(vhat) / bc2_sqrt + eps;
      p[k] = T(pk + neg_step * m / denom);
    }
  });
}

template <typename T>
void adam_impl(const OptimSlot& s, const AdamCoeffs& c) {
  with_flag(c.amsgrad, [&](auto ams) { adam_loop<T, decltype(ams)::value>(s, c); });
}

template <typename T, bool kCentered, bool kMomentum>
void rmsprop_loop(const OptimSlot& s, const RmspropCoeffs& c) {
  using A = acc_type<T>;
  T* p = s.param.data<T>();
  const T* g = s.grad.data<T>();
  T* square_avg = s.state[0].data<T>();
  T* grad_avg = kCentered ? s.state[1].data<T>() : nullptr;
  T* buf = kMomentum ? s.state[2].data<T>() : nullptr;
  const A wd = A(c.weight_decay), alpha = A(c.alpha), w = A(1 - c.alpha), eps = A(c.eps),
          mom = A(c.momentum), neg_lr = A(-c.lr);
  const bool decay = c.weight_decay != 0, maximize = c.maximize, small = std::abs(w) < A(0.5);
  for_chunks(s.param.numel(), [=](int64_t begin, int64_t end) {
#pragma GCC ivdep
    for (int64_t k = begin; k < end; ++k) {
      const A pk = A(p[k]);
      const A d = effective_grad(A(g[k]), pk, maximize, decay, wd);
      const A sq = stored<T>(stored<T>(A(square_avg[k]) * alpha) + w * d * d);
      square_avg[k] = T(sq);
      A avg;
      if constexpr (kCentered) {
        const A ga = stored<T>(lerp(A(grad_avg[k]), d, w, small));
        grad_avg[k] = T(ga);
        avg = std::sqrt(sq + A(-1) * ga * ga);
      } else {
        avg = std::sqrt(sq);
      }
      avg = avg + eps;
      if constexpr (kMomentum) {
        const A b = stored<T>(stored<T>(A(buf[k]) * mom) + d / avg);
        buf[k] = T(b);
        p[k] = T(pk + neg_lr * b);
      } else {
        p[k] = T(pk + neg_lr * d / avg);
      }
    }
  });
}

template <typename T>
void rmsprop_impl(const OptimSlot& s, const RmspropCoeffs& c) {
  with_flag(c.centered, [&](auto centered) {
    with_flag(c.momentum > 0, [&](auto momentum) {
      rmsprop_loop<T, decltype(centered)::value, decltype(momentum)::value>(s, c);
    });
  });
}

template <typename T>
void adagrad_impl(const OptimSlot& s, const AdagradCoeffs& c) {
  using A = acc_type<T>;
  T* p = s.param.data<T>();
  const T* g = s.grad.data<T>();
  T* sum = s.state[0].data<T>();
  const A wd = A(c.weight_decay), eps = A(c.eps), neg_clr = A(-c.clr);
  const bool decay = c.weight_decay != 0, maximize = c.maximize;
  for_chunks(s.param.numel(), [=](int64_t begin, int64_t end) {
#pragma GCC ivdep
    for (int64_t k = begin; k < end; ++k) {
      const A pk = A(p[k]);
      const A d = effective_grad(A(g[k]), pk, maximize, decay, wd);
      const A acc = stored<T>(A(sum[k]) + d * d);
      sum[k] = T(acc);
      const A std_dev = std::sqrt(acc) + eps;
      p[k] = T(pk + neg_clr * d / std_dev);
    }
  });
}

template <typename T>
void adadelta_impl(const OptimSlot& s, const AdadeltaCoeffs& c) {
  using A = acc_type<T>;
  T* p = s.param.data<T>();
  const T* g = s.grad.data<T>();
  T* square_avg = s.state[0].data<T>();
  T* acc_delta = s.state[1].data<T>();
  const A wd = A(c.weight_decay), rho = A(c.rho), w = A(1 - c.rho), eps = A(c.eps),
          neg_lr = A(-c.lr);
  const bool decay = c.weight_decay != 0, maximize = c.maximize;
  for_chunks(s.param.numel(), [=](int64_t begin, int64_t end) {
#pragma GCC ivdep
    for (int64_t k = begin; k < end; ++k) {
      const A pk = A(p[k]);
      const A d = effective_grad(A(g[k]), pk, maximize, decay, wd);
      const A sq = stored<T>(stored<T>(A(square_avg[k]) * rho) + w * d * d);
      square_avg[k] = T(sq);
      const A std_dev = std::sqrt(sq + eps);
      const A acc = A(acc_delta[k]);
      const A delta = stored<T>(std::sqrt(acc + eps) / std_dev * d);
      acc_delta[k] = T(stored<T>(acc * rho) + w * delta * delta);
      p[k] = T(pk + neg_lr * delta);
    }
  });
}

template <typename T>
void adamax_impl(const OptimSlot& s, const AdamaxCoeffs& c) {
  using A = acc_type<T>;
  T* p = s.param.data<T>();
  const T* g = s.grad.data<T>();
  T* exp_avg = s.state[0].data<T>();
  T* exp_inf = s.state[1].data<T>();
  const A wd = A(c.weight_decay), w1 = A(1 - c.beta1), b2 = A(c.beta2), eps = A(c.eps),
          neg_clr = A(-c.clr);
  const bool decay = c.weight_decay != 0, maximize = c.maximize, small = std::abs(w1) < A(0.5);
  for_chunks(s.param.numel(), [=](int64_t begin, int64_t end) {
#pragma GCC ivdep
    for (int64_t k = begin; k < end; ++k) {
      const A pk = A(p[k]);
      const A d = effective_grad(A(g[k]), pk, maximize, decay, wd);
      const A m = stored<T>(lerp(A(exp_avg[k]), d, w1, small));
      exp_avg[k] = T(m);
      const A u = stored<T>(maximum(stored<T>(A(exp_inf[k]) * b2), stored<T>(std::abs(d) + eps)));
      exp_inf[k] = T(u);
      p[k] = T(pk + neg_clr * m / u);
    }
  });
}

template <typename T>
void nadam_impl(const OptimSlot& s, const NadamCoeffs& c) {
  using A = acc_type<T>;
  T* p = s.param.data<T>();
  const T* g = s.grad.data<T>();
  T* exp_avg = s.state[0].data<T>();
  T* exp_avg_sq = s.state[1].data<T>();
  const A wd = A(c.weight_decay), decay_factor = A(1 - c.lr * c.weight_decay);
  const A w1 = A(1 - c.beta1), b2 = A(c.beta2), w2 = A(1 - c.beta2);
  const A bc2 = A(c.bias_correction2), eps = A(c.eps);
  const A grad_coeff = A(c.grad_coeff), exp_avg_coeff = A(c.exp_avg_coeff);
  const bool decay = c.weight_decay != 0, decoupled = decay && c.decoupled_weight_decay,
             coupled = decay && !c.decoupled_weight_decay, maximize = c.maximize,
             small = std::abs(w1) < A(0.5);
  for_chunks(s.param.numel(), [=](int64_t begin, int64_t end) {
#pragma GCC ivdep
    for (int64_t k = begin; k < end; ++k) {
      A pk = A(p[k]);
      pk = decoupled ? stored<T>(pk * decay_factor) : pk;
      const A d = effective_grad(A(g[k]), pk, maximize, coupled, wd);
      const A m = stored<T>(lerp(A(exp_avg[k]), d, w1, small));
      const A v = stored<T>(stored<T>(A(exp_avg_sq[k]) * b2) + w2 * d * d);
      exp_avg[k] = T(m);
      exp_avg_sq[k] = T(v);
      const A denom = std::sqrt(v / bc2) + eps;
      pk = stored<T>(pk + grad_coeff * d / denom);
      p[k] = T(pk + exp_avg_coeff * m / denom);
    }
  });
}

template <typename T, bool kRectify>
void radam_loop(const OptimSlot& s, const RadamCoeffs& c) {
  using A = acc_type<T>;
  T* p = s.param.data<T>();
  const T* g = s.grad.data<T>();
  T* exp_avg = s.state[0].data<T>();
  T* exp_avg_sq = s.state[1].data<T>();
  const A wd = A(c.weight_decay), decay_factor = A(1 - c.lr * c.weight_decay);
  const A w1 = A(1 - c.beta1), b2 = A(c.beta2), w2 = A(1 - c.beta2);
  const A bc1 = A(c.bias_correction1), bc2_sqrt = A(c.bias_correction2_sqrt), eps = A(c.eps);
  const A lr = A(c.lr), rect = A(c.rect);
  const bool decay = c.weight_decay != 0, decoupled = decay && c.decoupled_weight_decay,
             coupled = decay && !c.decoupled_weight_decay, maximize = c.maximize,
             small = std::abs(w1) < A(0.5);
  for_chunks(s.param.numel(), [=](int64_t begin, int64_t end) {
#pragma GCC ivdep
    for (int64_t k = begin; k < end; ++k) {
      A pk = A(p[k]);
      pk = decoupled ? stored<T>(pk * decay_factor) : pk;
      const A d = effective_grad(A(g[k]), pk, maximize, coupled, wd);
      const A m = stored<T>(lerp(A(exp_avg[k]), d, w1, small));
      const A v = stored<T>(stored<T>(A(exp_avg_sq[k]) * b2) + w2 * d * d);
      exp_avg[k] = T(m);
      exp_avg_sq[k] = T(v);
      A update = m / bc1 * lr;
      if constexpr (kRectify) {
        // bias_corrected_exp_avg * lr * (bc2_sqrt / (sqrt(v) + eps)) * rect, where PyTorch's
        // scalar-over-tensor division is reciprocal(t) * scalar.
        const A adaptive = A(1) / (std::sqrt(v) + eps) * bc2_sqrt;
        update = update * adaptive * rect;
      }
      p[k] = T(pk + A(-1) * update);
    }
  });
}

template <typename T>
void radam_impl(const OptimSlot& s, const RadamCoeffs& c) {
  with_flag(c.rectify, [&](auto rectify) { radam_loop<T, decltype(rectify)::value>(s, c); });
}

// One dispatch per kernel over the real floating dtypes (complex parameters arrive as real views).
#define EMBER_OPTIM_KERNEL(name, Coeffs)                                          \
  void name##_kernel(const OptimSlot& s, const Coeffs& c) {                       \
    dispatch_dtype<kFloatingTypes>(s.param.dtype(), #name, [&](auto tag) {       \
      name##_impl<typename decltype(tag)::type>(s, c);                            \
    });                                                                           \
  }

EMBER_OPTIM_KERNEL(sgd, SgdCoeffs)
EMBER_OPTIM_KERNEL(adam, AdamCoeffs)
EMBER_OPTIM_KERNEL(rmsprop, RmspropCoeffs)
EMBER_OPTIM_KERNEL(adagrad, AdagradCoeffs)
EMBER_OPTIM_KERNEL(adadelta, AdadeltaCoeffs)
EMBER_OPTIM_KERNEL(adamax, AdamaxCoeffs)
EMBER_OPTIM_KERNEL(nadam, NadamCoeffs)
EMBER_OPTIM_KERNEL(radam, RadamCoeffs)
#undef EMBER_OPTIM_KERNEL

}  // namespace

EMBER_REGISTER_KERNEL(sgd_step_stub, CPU, sgd_kernel);
EMBER_REGISTER_KERNEL(adam_step_stub, CPU, adam_kernel);
EMBER_REGISTER_KERNEL(rmsprop_step_stub, CPU, rmsprop_kernel);
EMBER_REGISTER_KERNEL(adagrad_step_stub, CPU, adagrad_kernel);
EMBER_REGISTER_KERNEL(adadelta_step_stub, CPU, adadelta_kernel);
EMBER_REGISTER_KERNEL(adamax_step_stub, CPU, adamax_kernel);
EMBER_REGISTER_KERNEL(nadam_step_stub, CPU, nadam_kernel);
EMBER_REGISTER_KERNEL(radam_step_stub, CPU, radam_kernel);

}  // namespace optim
}  // namespace ember
