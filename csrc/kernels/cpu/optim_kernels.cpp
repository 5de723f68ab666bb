// CPU kernels of the fused optimizer steps (Note [Fused Optimizer Steps] in ops/optim_steps.cpp).
// Each kernel updates one parameter and its state in a single pass over contiguous memory, in
// parallel chunks for large tensors. The element formulas spell out PyTorch's single-tensor
// implementation op by op, in the same order (lerp, then mul + addcmul, then addcdiv, ...), in the
// accumulation type A: float for float16/bfloat16/float32, double for float64. Values that
// PyTorch stores in a state tensor and reads back are rounded to the storage type (`stored`), so
// float16/bfloat16 states round where PyTorch's do.
#include <cmath>
#include <type_traits>

#include "core/half.h"
#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/cpu_level.h"
#include "kernels/optim_stubs.h"

namespace ember {
namespace native {
namespace optim {
inline namespace EMBER_CPU_NS {
namespace {

// An update touches 3-6 arrays with ~10-20 flops per element: worth a thread above this size.
constexpr int64_t kOptimGrain = 16384;

// Note [Vectorisable optimizer loops]
// GCC vectorises a loop only if its body has no control flow, and under the default
// -ftrapping-math it will not if-convert `flag ? a + b * c : a` (that would speculate floating
// point arithmetic), so it unswitches such loops on their flags instead, up to a limit beyond
// which it leaves a scalar loop. Hence:
//  - everything that decides *what is computed* (weight decay mode, momentum, amsgrad, centered,
//    nesterov, RAdam's rectification) is a template parameter;
//  - `maximize` is a multiplication by +-1 (exact), and torch.lerp's two formulas are one
//    expression with a selected base (`small` picks between two loaded values, no arithmetic);
//  - each kernel packs pointers and constants into an `...Args` struct and runs its loop in
//    `..._range(Args a, begin, end)`, which takes the struct by value: a local copy whose address
//    never escapes, so the constants stay in registers (read through a lambda's captures, whose
//    closure escapes into parallel_for's std::function, they would be reloaded after every
//    float store, which blocks vectorisation);
//  - the arrays of one slot never overlap (SlotGuard in ops/optim_steps.cpp checks), hence
//    `#pragma GCC ivdep`: no runtime alias checks, whose count grows with the number of arrays.
template <typename Args, typename Range>
void run_chunks(int64_t n, const Args& args, Range range) {
  parallel_for(0, n, kOptimGrain, [&](int64_t begin, int64_t end) { range(args, begin, end); });
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

// torch.lerp(self, end, w): self + w * (end - self) when |w| < 0.5, else
// end - (end - self) * (1 - w), i.e. end + (end - self) * coef with coef = -(1 - w) (negating the
// product is exact). lerp_coef picks coef once per call; the loop selects only the base.
template <typename A>
inline A lerp_coef(A weight) {
  return std::abs(weight) < A(0.5) ? weight : -(A(1) - weight);
}
template <typename A>
inline A lerp(A self, A end, A coef, bool small) {
  return (small ? self : end) + coef * (end - self);
}

// torch.maximum: NaN in either operand propagates (a NaN b fails a > b and returns b).
template <typename A>
inline A maximum(A a, A b) {
  return ((a > b) | (a != a)) ? a : b;  // `|`, not `||`: no branch
}

// Weight decay: none, L2 added to the gradient (coupled), or AdamW's shrinking of the parameter
// before the update (decoupled). Without decay nothing is computed: an inf parameter must not
// turn the gradient into NaN through 0 * inf.
enum class Decay { kNone, kCoupled, kDecoupled };

template <typename F>
void with_decay(double weight_decay, bool decoupled, const F& f) {
  if (weight_decay == 0) {
    f(std::integral_constant<Decay, Decay::kNone>{});
  } else if (decoupled) {
    f(std::integral_constant<Decay, Decay::kDecoupled>{});
  } else {
    f(std::integral_constant<Decay, Decay::kCoupled>{});
  }
}

// Calls f(std::true_type{}) or f(std::false_type{}): a runtime flag as a compile-time one.
template <typename F>
void with_flag(bool b, const F& f) {
  if (b) {
    f(std::true_type{});
  } else {
    f(std::false_type{});
  }
}

// The parameter after decoupled decay and the gradient the update sees: sign * grad (sign = -1
// with maximize), plus weight_decay * param with coupled decay.
template <Decay D, typename T, typename A>
inline void decay_and_grad(A& param, A& d, A grad, A sign, A weight_decay, A decay_factor) {
  if constexpr (D == Decay::kDecoupled) param = stored<T>(param * decay_factor);
  d = grad * sign;
  if constexpr (D == Decay::kCoupled) d = d + weight_decay * param;
}

// --- SGD ---
template <typename T>
struct SgdArgs {
  using A = acc_type<T>;
  T* p;
  const T* g;
  T* buf;
  A sign, wd, mom, keep, neg_lr;
};

template <typename T, Decay D, bool kMomentum, bool kInitBuffer, bool kNesterov>
void sgd_range(const SgdArgs<T> a, int64_t begin, int64_t end) {
  using A = acc_type<T>;
#pragma GCC ivdep
  for (int64_t k = begin; k < end; ++k) {
    A pk = A(a.p[k]), d;
    decay_and_grad<D, T>(pk, d, A(a.g[k]), a.sign, a.wd, A(1));
    if constexpr (kMomentum) {
      // First step: buf = clone(grad); then buf = buf * momentum + (1 - dampening) * grad.
      A b;
      if constexpr (kInitBuffer) {
        b = stored<T>(d);
      } else {
        b = stored<T>(A(a.buf[k]) * a.mom + a.keep * d);
      }
      a.buf[k] = T(b);
      if constexpr (kNesterov) {
        d = d + a.mom * b;
      } else {
        d = b;
      }
    }
    a.p[k] = T(pk + a.neg_lr * d);
  }
}

template <typename T>
void sgd_impl(const OptimSlot& s, const SgdCoeffs& c) {
  using A = acc_type<T>;
  const bool momentum = c.momentum != 0;
  const SgdArgs<T> args{
      s.param.data<T>(),      s.grad.data<T>(),  momentum ? s.state[0].data<T>() : nullptr,
      A(c.maximize ? -1 : 1), A(c.weight_decay), A(c.momentum),
      A(1 - c.dampening),     A(-c.lr)};
  const int64_t n = s.param.numel();
  with_decay(c.weight_decay, false, [&](auto decay) {
    constexpr Decay D = decltype(decay)::value;
    if (!momentum) return run_chunks(n, args, sgd_range<T, D, false, false, false>);
    with_flag(c.init_buffer, [&](auto init) {
      with_flag(c.nesterov, [&](auto nesterov) {
        run_chunks(n, args,
                   sgd_range<T, D, true, decltype(init)::value, decltype(nesterov)::value>);
      });
    });
  });
}

// --- Adam / AdamW ---
template <typename T>
struct AdamArgs {
  using A = acc_type<T>;
  T* p;
  const T* g;
  T *exp_avg, *exp_avg_sq, *max_sq;
  A sign, wd, decay_factor, coef1, b2, w2, bc2_sqrt, eps, neg_step;
  bool small;
};

template <typename T, Decay D, bool kAmsgrad>
void adam_range(const AdamArgs<T> a, int64_t begin, int64_t end) {
  using A = acc_type<T>;
#pragma GCC ivdep
  for (int64_t k = begin; k < end; ++k) {
    A pk = A(a.p[k]), d;
    decay_and_grad<D, T>(pk, d, A(a.g[k]), a.sign, a.wd, a.decay_factor);
    const A m = stored<T>(lerp(A(a.exp_avg[k]), d, a.coef1, a.small));
    const A v = stored<T>(stored<T>(A(a.exp_avg_sq[k]) * a.b2) + a.w2 * d * d);
    a.exp_avg[k] = T(m);
    a.exp_avg_sq[k] = T(v);
    A vhat = v;
    if constexpr (kAmsgrad) {
      vhat = maximum(A(a.max_sq[k]), v);
      a.max_sq[k] = T(vhat);
    }
    const A denom = std::sqrt(vhat) / a.bc2_sqrt + a.eps;
    a.p[k] = T(pk + a.neg_step * m / denom);
  }
}

template <typename T>
void adam_impl(const OptimSlot& s, const AdamCoeffs& c) {
  using A = acc_type<T>;
  const A w1 = A(1 - c.beta1);
  const AdamArgs<T> args{s.param.data<T>(),
                         s.grad.data<T>(),
                         s.state[0].data<T>(),
                         s.state[1].data<T>(),
                         c.amsgrad ? s.state[2].data<T>() : nullptr,
                         A(c.maximize ? -1 : 1),
                         A(c.weight_decay),
                         A(1 - c.lr * c.weight_decay),
                         lerp_coef(w1),
                         A(c.beta2),
                         A(1 - c.beta2),
                         A(c.bias_correction2_sqrt),
                         A(c.eps),
                         A(-c.step_size),
                         std::abs(w1) < A(0.5)};
  with_decay(c.weight_decay, c.decoupled_weight_decay, [&](auto decay) {
    with_flag(c.amsgrad, [&](auto ams) {
      run_chunks(s.param.numel(), args,
                 adam_range<T, decltype(decay)::value, decltype(ams)::value>);
    });
  });
}

// --- RMSprop ---
template <typename T>
struct RmspropArgs {
  using A = acc_type<T>;
  T* p;
  const T* g;
  T *square_avg, *grad_avg, *buf;
  A sign, wd, alpha, w, coef, eps, mom, neg_lr;
  bool small;
};

template <typename T, Decay D, bool kCentered, bool kMomentum>
void rmsprop_range(const RmspropArgs<T> a, int64_t begin, int64_t end) {
  using A = acc_type<T>;
#pragma GCC ivdep
  for (int64_t k = begin; k < end; ++k) {
    A pk = A(a.p[k]), d;
    decay_and_grad<D, T>(pk, d, A(a.g[k]), a.sign, a.wd, A(1));
    const A sq = stored<T>(stored<T>(A(a.square_avg[k]) * a.alpha) + a.w * d * d);
    a.square_avg[k] = T(sq);
    A avg;
    if constexpr (kCentered) {
      const A ga = stored<T>(lerp(A(a.grad_avg[k]), d, a.coef, a.small));
      a.grad_avg[k] = T(ga);
      avg = std::sqrt(sq + A(-1) * ga * ga);
    } else {
      avg = std::sqrt(sq);
    }
    avg = avg + a.eps;
    if constexpr (kMomentum) {
      const A b = stored<T>(stored<T>(A(a.buf[k]) * a.mom) + d / avg);
      a.buf[k] = T(b);
      a.p[k] = T(pk + a.neg_lr * b);
    } else {
      a.p[k] = T(pk + a.neg_lr * d / avg);
    }
  }
}

template <typename T>
void rmsprop_impl(const OptimSlot& s, const RmspropCoeffs& c) {
  using A = acc_type<T>;
  const A w = A(1 - c.alpha);
  const RmspropArgs<T> args{s.param.data<T>(),
                            s.grad.data<T>(),
                            s.state[0].data<T>(),
                            c.centered ? s.state[1].data<T>() : nullptr,
                            c.momentum > 0 ? s.state[2].data<T>() : nullptr,
                            A(c.maximize ? -1 : 1),
                            A(c.weight_decay),
                            A(c.alpha),
                            w,
                            lerp_coef(w),
                            A(c.eps),
                            A(c.momentum),
                            A(-c.lr),
                            std::abs(w) < A(0.5)};
  with_decay(c.weight_decay, false, [&](auto decay) {
    with_flag(c.centered, [&](auto centered) {
      with_flag(c.momentum > 0, [&](auto momentum) {
        run_chunks(s.param.numel(), args,
                   rmsprop_range<T, decltype(decay)::value, decltype(centered)::value,
                                 decltype(momentum)::value>);
      });
    });
  });
}

// --- Adagrad ---
template <typename T>
struct AdagradArgs {
  using A = acc_type<T>;
  T* p;
  const T* g;
  T* sum;
  A sign, wd, eps, neg_clr;
};

template <typename T, Decay D>
void adagrad_range(const AdagradArgs<T> a, int64_t begin, int64_t end) {
  using A = acc_type<T>;
#pragma GCC ivdep
  for (int64_t k = begin; k < end; ++k) {
    A pk = A(a.p[k]), d;
    decay_and_grad<D, T>(pk, d, A(a.g[k]), a.sign, a.wd, A(1));
    const A acc = stored<T>(A(a.sum[k]) + d * d);
    a.sum[k] = T(acc);
    const A std_dev = std::sqrt(acc) + a.eps;
    a.p[k] = T(pk + a.neg_clr * d / std_dev);
  }
}

template <typename T>
void adagrad_impl(const OptimSlot& s, const AdagradCoeffs& c) {
  using A = acc_type<T>;
  const AdagradArgs<T> args{s.param.data<T>(),
                            s.grad.data<T>(),
                            s.state[0].data<T>(),
                            A(c.maximize ? -1 : 1),
                            A(c.weight_decay),
                            A(c.eps),
                            A(-c.clr)};
  with_decay(c.weight_decay, false, [&](auto decay) {
    run_chunks(s.param.numel(), args, adagrad_range<T, decltype(decay)::value>);
  });
}

// --- Adadelta ---
template <typename T>
struct AdadeltaArgs {
  using A = acc_type<T>;
  T* p;
  const T* g;
  T *square_avg, *acc_delta;
  A sign, wd, rho, w, eps, neg_lr;
};

template <typename T, Decay D>
void adadelta_range(const AdadeltaArgs<T> a, int64_t begin, int64_t end) {
  using A = acc_type<T>;
#pragma GCC ivdep
  for (int64_t k = begin; k < end; ++k) {
    A pk = A(a.p[k]), d;
    decay_and_grad<D, T>(pk, d, A(a.g[k]), a.sign, a.wd, A(1));
    const A sq = stored<T>(stored<T>(A(a.square_avg[k]) * a.rho) + a.w * d * d);
    a.square_avg[k] = T(sq);
    const A std_dev = std::sqrt(sq + a.eps);
    const A acc = A(a.acc_delta[k]);
    const A delta = stored<T>(std::sqrt(acc + a.eps) / std_dev * d);
    a.acc_delta[k] = T(stored<T>(acc * a.rho) + a.w * delta * delta);
    a.p[k] = T(pk + a.neg_lr * delta);
  }
}

template <typename T>
void adadelta_impl(const OptimSlot& s, const AdadeltaCoeffs& c) {
  using A = acc_type<T>;
  const AdadeltaArgs<T> args{s.param.data<T>(),
                             s.grad.data<T>(),
                             s.state[0].data<T>(),
                             s.state[1].data<T>(),
                             A(c.maximize ? -1 : 1),
                             A(c.weight_decay),
                             A(c.rho),
                             A(1 - c.rho),
                             A(c.eps),
                             A(-c.lr)};
  with_decay(c.weight_decay, false, [&](auto decay) {
    run_chunks(s.param.numel(), args, adadelta_range<T, decltype(decay)::value>);
  });
}

// --- Adamax ---
template <typename T>
struct AdamaxArgs {
  using A = acc_type<T>;
  T* p;
  const T* g;
  T *exp_avg, *exp_inf;
  A sign, wd, coef1, b2, eps, neg_clr;
  bool small;
};

template <typename T, Decay D>
void adamax_range(const AdamaxArgs<T> a, int64_t begin, int64_t end) {
  using A = acc_type<T>;
#pragma GCC ivdep
  for (int64_t k = begin; k < end; ++k) {
    A pk = A(a.p[k]), d;
    decay_and_grad<D, T>(pk, d, A(a.g[k]), a.sign, a.wd, A(1));
    const A m = stored<T>(lerp(A(a.exp_avg[k]), d, a.coef1, a.small));
    a.exp_avg[k] = T(m);
    const A u =
        stored<T>(maximum(stored<T>(A(a.exp_inf[k]) * a.b2), stored<T>(std::abs(d) + a.eps)));
    a.exp_inf[k] = T(u);
    a.p[k] = T(pk + a.neg_clr * m / u);
  }
}

template <typename T>
void adamax_impl(const OptimSlot& s, const AdamaxCoeffs& c) {
  using A = acc_type<T>;
  const A w1 = A(1 - c.beta1);
  const AdamaxArgs<T> args{s.param.data<T>(),
                           s.grad.data<T>(),
                           s.state[0].data<T>(),
                           s.state[1].data<T>(),
                           A(c.maximize ? -1 : 1),
                           A(c.weight_decay),
                           lerp_coef(w1),
                           A(c.beta2),
                           A(c.eps),
                           A(-c.clr),
                           std::abs(w1) < A(0.5)};
  with_decay(c.weight_decay, false, [&](auto decay) {
    run_chunks(s.param.numel(), args, adamax_range<T, decltype(decay)::value>);
  });
}

// --- NAdam ---
template <typename T>
struct NadamArgs {
  using A = acc_type<T>;
  T* p;
  const T* g;
  T *exp_avg, *exp_avg_sq;
  A sign, wd, decay_factor, coef1, b2, w2, bc2, eps, grad_coeff, exp_avg_coeff;
  bool small;
};

template <typename T, Decay D>
void nadam_range(const NadamArgs<T> a, int64_t begin, int64_t end) {
  using A = acc_type<T>;
#pragma GCC ivdep
  for (int64_t k = begin; k < end; ++k) {
    A pk = A(a.p[k]), d;
    decay_and_grad<D, T>(pk, d, A(a.g[k]), a.sign, a.wd, a.decay_factor);
    const A m = stored<T>(lerp(A(a.exp_avg[k]), d, a.coef1, a.small));
    const A v = stored<T>(stored<T>(A(a.exp_avg_sq[k]) * a.b2) + a.w2 * d * d);
    a.exp_avg[k] = T(m);
    a.exp_avg_sq[k] = T(v);
    const A denom = std::sqrt(v / a.bc2) + a.eps;
    pk = stored<T>(pk + a.grad_coeff * d / denom);
    a.p[k] = T(pk + a.exp_avg_coeff * m / denom);
  }
}

template <typename T>
void nadam_impl(const OptimSlot& s, const NadamCoeffs& c) {
  using A = acc_type<T>;
  const A w1 = A(1 - c.beta1);
  const NadamArgs<T> args{s.param.data<T>(),
                          s.grad.data<T>(),
                          s.state[0].data<T>(),
                          s.state[1].data<T>(),
                          A(c.maximize ? -1 : 1),
                          A(c.weight_decay),
                          A(1 - c.lr * c.weight_decay),
                          lerp_coef(w1),
                          A(c.beta2),
                          A(1 - c.beta2),
                          A(c.bias_correction2),
                          A(c.eps),
                          A(c.grad_coeff),
                          A(c.exp_avg_coeff),
                          std::abs(w1) < A(0.5)};
  with_decay(c.weight_decay, c.decoupled_weight_decay, [&](auto decay) {
    run_chunks(s.param.numel(), args, nadam_range<T, decltype(decay)::value>);
  });
}

// --- RAdam ---
template <typename T>
struct RadamArgs {
  using A = acc_type<T>;
  T* p;
  const T* g;
  T *exp_avg, *exp_avg_sq;
  A sign, wd, decay_factor, coef1, b2, w2, bc1, bc2_sqrt, eps, lr, rect;
  bool small;
};

template <typename T, Decay D, bool kRectify>
void radam_range(const RadamArgs<T> a, int64_t begin, int64_t end) {
  using A = acc_type<T>;
#pragma GCC ivdep
  for (int64_t k = begin; k < end; ++k) {
    A pk = A(a.p[k]), d;
    decay_and_grad<D, T>(pk, d, A(a.g[k]), a.sign, a.wd, a.decay_factor);
    const A m = stored<T>(lerp(A(a.exp_avg[k]), d, a.coef1, a.small));
    const A v = stored<T>(stored<T>(A(a.exp_avg_sq[k]) * a.b2) + a.w2 * d * d);
    a.exp_avg[k] = T(m);
    a.exp_avg_sq[k] = T(v);
    A update = m / a.bc1 * a.lr;
    if constexpr (kRectify) {
      // bias_corrected_exp_avg * lr * (bc2_sqrt / (sqrt(v) + eps)) * rect, where PyTorch's
      // scalar-over-tensor division is reciprocal(t) * scalar.
      const A adaptive = A(1) / (std::sqrt(v) + a.eps) * a.bc2_sqrt;
      update = update * adaptive * a.rect;
    }
    a.p[k] = T(pk + A(-1) * update);
  }
}

template <typename T>
void radam_impl(const OptimSlot& s, const RadamCoeffs& c) {
  using A = acc_type<T>;
  const A w1 = A(1 - c.beta1);
  const RadamArgs<T> args{s.param.data<T>(),
                          s.grad.data<T>(),
                          s.state[0].data<T>(),
                          s.state[1].data<T>(),
                          A(c.maximize ? -1 : 1),
                          A(c.weight_decay),
                          A(1 - c.lr * c.weight_decay),
                          lerp_coef(w1),
                          A(c.beta2),
                          A(1 - c.beta2),
                          A(c.bias_correction1),
                          A(c.bias_correction2_sqrt),
                          A(c.eps),
                          A(c.lr),
                          A(c.rect),
                          std::abs(w1) < A(0.5)};
  with_decay(c.weight_decay, c.decoupled_weight_decay, [&](auto decay) {
    with_flag(c.rectify, [&](auto rectify) {
      run_chunks(s.param.numel(), args,
                 radam_range<T, decltype(decay)::value, decltype(rectify)::value>);
    });
  });
}

// One dispatch per kernel over the real floating dtypes (complex parameters arrive as real views).
#define EMBER_OPTIM_KERNEL(name, Coeffs)                                   \
  void name##_kernel(const OptimSlot& s, const Coeffs& c) {                \
    dispatch_dtype<kFloatingTypes>(s.param.dtype(), #name, [&](auto tag) { \
      name##_impl<typename decltype(tag)::type>(s, c);                     \
    });                                                                    \
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

}  // namespace EMBER_CPU_NS
}  // namespace optim
}  // namespace native
}  // namespace ember
