// CPU kernels of the pointwise losses (float32 / float64) over a TensorIterator.
// Each loss is a small struct with the elementwise loss `f(x, t, w, pw)` and its partial
// derivatives `dx(x, t, w, pw)`, `dt(...)`; w / pw are 1 when absent. The loops have a
// contiguous path (vectorised by the compiler; exp / log are vmath's, see vec_math.h) and a
// strided path. Reductions run over fixed blocks of the iteration space and add the block sums
// in order, so the result does not depend on the thread count.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "dispatch/tensor_iterator.h"
#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/nn/row_ops.h"
#include "kernels/cpu/vec_math.h"
#include "kernels/nn/loss_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

template <typename T>
inline T sign_of(T d) {
  return d > T(0) ? T(1) : (d < T(0) ? T(-1) : T(0));
}

template <typename T>
struct Mse {
  static constexpr bool kWeighted = false;
  T p;
  T f(T x, T t, T, T) const { return (x - t) * (x - t); }
  T dx(T x, T t, T, T) const { return T(2) * (x - t); }
  T dt(T x, T t, T w, T pw) const { return -dx(x, t, w, pw); }
};

template <typename T>
struct L1 {
  static constexpr bool kWeighted = false;
  T p;
  T f(T x, T t, T, T) const { return std::fabs(x - t); }
  T dx(T x, T t, T, T) const { return sign_of(x - t); }
  T dt(T x, T t, T w, T pw) const { return -dx(x, t, w, pw); }
};

template <typename T>
struct SmoothL1 {
  static constexpr bool kWeighted = false;
  T beta;
  T f(T x, T t, T, T) const {
    const T z = std::fabs(x - t);
    return z < beta ? T(0.5) * z * z / beta : z - T(0.5) * beta;
  }
  T dx(T x, T t, T, T) const {
    const T z = x - t;
    return z < -beta ? T(-1) : (z > beta ? T(1) : z / beta);
  }
  T dt(T x, T t, T w, T pw) const { return -dx(x, t, w, pw); }
};

template <typename T>
struct Huber {
  static constexpr bool kWeighted = false;
  T delta;
  T f(T x, T t, T, T) const {
    const T z = std::fabs(x - t);
    return z < delta ? T(0.5) * z * z : delta * (z - T(0.5) * delta);
  }
  T dx(T x, T t, T, T) const {
    const T z = x - t;
    return z < -delta ? -delta : (z > delta ? delta : z);
  }
  T dt(T x, T t, T w, T pw) const { return -dx(x, t, w, pw); }
};

// PyTorch clamps the logs at -100 so that x = 0 or 1 gives a finite loss.
template <typename T>
struct Bce {
  static constexpr bool kWeighted = true;
  T p;
  T f(T x, T t, T w, T) const {
    const T lx = std::max(vmath::log(x), T(-100));
    const T l1x = std::max(vmath::log1p(-x), T(-100));
    return w * ((t - T(1)) * l1x - t * lx);
  }
  T dx(T x, T t, T w, T) const { return w * (x - t) / std::max((T(1) - x) * x, T(1e-12)); }
  T dt(T x, T, T w, T) const { return w * (vmath::log1p(-x) - vmath::log(x)); }
};

// log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), stable for every x.
template <typename T>
inline T log_sigmoid(T x) {
  return std::min(x, T(0)) - vmath::log1p(vmath::exp(-std::fabs(x)));
}

template <typename T>
struct BceLogits {
  static constexpr bool kWeighted = true;
  T p;
  T f(T x, T t, T w, T pw) const {
    const T lw = (pw - T(1)) * t + T(1);
    return w * ((T(1) - t) * x - lw * log_sigmoid(x));
  }
  T dx(T x, T t, T w, T pw) const {
    const T pt = pw * t;
    return w * ((pt + T(1) - t) * vmath::sigmoid(x) - pt);
  }
  T dt(T x, T, T w, T pw) const { return w * (log_sigmoid(-x) - pw * log_sigmoid(x)); }
};

// Pointers and byte strides of the operands of one inner loop; absent w / pw read a constant 1.
template <typename T>
struct Operand {
  const char* p;
  int64_t s;
  T at(int64_t k) const { return *reinterpret_cast<const T*>(p + k * s); }
};

constexpr int64_t kReduceBlock = 1 << 14;

// Calls f(std::bool_constant<has_w>, std::bool_constant<has_pw>): the contiguous loops know at
// compile time which operands exist (a load guarded by a runtime null check does not vectorise).
// Losses without weights only instantiate the unweighted loop.
template <typename Op, typename F>
decltype(auto) with_weights(bool has_w, bool has_pw, F&& f) {
  if constexpr (Op::kWeighted) {
    if (has_w && has_pw) return f(std::true_type{}, std::true_type{});
    if (has_w) return f(std::true_type{}, std::false_type{});
    if (has_pw) return f(std::false_type{}, std::true_type{});
  }
  return f(std::false_type{}, std::false_type{});
}

// Contiguous operands: writes the loss to `out`, or (out null) returns its sum.
template <typename T, bool kW, bool kPW, typename Op>
EMBER_NN_FLATTEN double contiguous_forward(const Op& op, const T* X, const T* Y, const T* W,
                                           const T* P, T* out, int64_t n) {
  auto at = [&](int64_t k) { return op.f(X[k], Y[k], kW ? W[k] : T(1), kPW ? P[k] : T(1)); };
  if (out) {
    for (int64_t k = 0; k < n; ++k) out[k] = at(k);
    return 0.0;
  }
  return nn_rows::sum_blocked<T>(n, at);
}

// Contiguous operands: gx = g * dloss/dx, gt = g * dloss/dt (either may be null); g has stride
// gs (0: a broadcast scalar, 1: contiguous).
template <typename T, bool kW, bool kPW, typename Op>
EMBER_NN_FLATTEN void contiguous_backward(const Op& op, const T* X, const T* Y, const T* G,
                                          int64_t gs, const T* W, const T* P, T* gx, T* gt,
                                          int64_t n) {
  // Plain separate loops (one per output, scalar or tensor grad), so that each one vectorises
  // and computes only what it stores.
#define EMBER_LOSS_GRAD_LOOP(out, fn, grad)                                 \
  for (int64_t k = 0; k < n; ++k) {                                         \
    out[k] = (grad)*op.fn(X[k], Y[k], kW ? W[k] : T(1), kPW ? P[k] : T(1)); \
  }
  if (gs == 0) {
    const T g0 = G[0];
    if (gx) EMBER_LOSS_GRAD_LOOP(gx, dx, g0)
    if (gt) EMBER_LOSS_GRAD_LOOP(gt, dt, g0)
  } else {
    if (gx) EMBER_LOSS_GRAD_LOOP(gx, dx, G[k])
    if (gt) EMBER_LOSS_GRAD_LOOP(gt, dt, G[k])
  }
#undef EMBER_LOSS_GRAD_LOOP
}

template <typename T, typename Op>
double forward(TensorIterator& iter, const Op& op, bool has_w, bool has_pw, bool check_range) {
  const bool reduce = iter.noutputs() == 0;
  const int in0 = iter.noutputs();
  static const T one = T(1);
  std::atomic<bool> bad_input{false}, bad_target{false};
  // Runs the loss over one inner loop; returns the loop's sum (reduce) or writes the output.
  auto run = [&](char** data, const int64_t* strides, int64_t n) -> double {
    Operand<T> x{data[in0], strides[in0]}, t{data[in0 + 1], strides[in0 + 1]};
    int next = in0 + 2;
    Operand<T> w = has_w ? Operand<T>{data[next], strides[next]}
                         : Operand<T>{reinterpret_cast<const char*>(&one), 0};
    if (has_w) ++next;
    Operand<T> pw = has_pw ? Operand<T>{data[next], strides[next]}
                           : Operand<T>{reinterpret_cast<const char*>(&one), 0};
    const int64_t sz = sizeof(T);
    if (check_range) {
      bool bx = false, bt = false;
      for (int64_t k = 0; k < n; ++k) {
        const T v = x.at(k), tv = t.at(k);
        bx |= !(v >= T(0) && v <= T(1));
        bt |= !(tv >= T(0) && tv <= T(1));
      }
      if (bx) bad_input = true;
      if (bt) bad_target = true;
      if (bx || bt) return 0.0;
    }
    const bool contiguous = x.s == sz && t.s == sz && (!has_w || w.s == sz) &&
                            (!has_pw || pw.s == sz) && (reduce || strides[0] == sz);
    if (contiguous) {
      T* out = reduce ? nullptr : reinterpret_cast<T*>(data[0]);
      return with_weights<Op>(has_w, has_pw, [&](auto kw, auto kpw) {
        return contiguous_forward<T, decltype(kw)::value, decltype(kpw)::value>(
            op, reinterpret_cast<const T*>(x.p), reinterpret_cast<const T*>(t.p),
            reinterpret_cast<const T*>(w.p), reinterpret_cast<const T*>(pw.p), out, n);
      });
    }
    double acc = 0;
    for (int64_t k = 0; k < n; ++k) {
      const T v = op.f(x.at(k), t.at(k), w.at(k), pw.at(k));
      if (reduce) {
        acc += v;
      } else {
        *reinterpret_cast<T*>(data[0] + k * strides[0]) = v;
      }
    }
    return acc;
  };
  double total = 0;
  const int64_t numel = iter.numel();
  if (!reduce) {
    iter.for_each([&](char** data, const int64_t* strides, int64_t n) { run(data, strides, n); });
  } else if (numel > 0) {
    const int64_t blocks = (numel + kReduceBlock - 1) / kReduceBlock;
    std::vector<double> partial(blocks, 0.0);
    parallel_for(0, blocks, 1, [&](int64_t b, int64_t e) {
      for (int64_t blk = b; blk < e; ++blk) {
        double s = 0;
        iter.serial_for_each(
            [&](char** data, const int64_t* strides, int64_t n) { s += run(data, strides, n); },
            blk * kReduceBlock, std::min(numel, (blk + 1) * kReduceBlock));
        partial[blk] = s;
      }
    });
    for (double s : partial) total += s;
  }
  EMBER_CHECK(!bad_input, "[binary_cross_entropy] all elements of input should be between 0 and 1");
  EMBER_CHECK(!bad_target,
              "[binary_cross_entropy] all elements of target should be between 0 and 1");
  return total;
}

template <typename T, typename Op>
void backward(TensorIterator& iter, const Op& op, bool has_w, bool has_pw, bool need_x,
              bool need_t) {
  const int nout = iter.noutputs();
  static const T one = T(1);
  iter.for_each([&](char** data, const int64_t* strides, int64_t n) {
    char* gx = need_x ? data[0] : nullptr;
    char* gt = need_t ? data[need_x ? 1 : 0] : nullptr;
    const int64_t sgx = need_x ? strides[0] : 0, sgt = need_t ? strides[need_x ? 1 : 0] : 0;
    Operand<T> x{data[nout], strides[nout]}, t{data[nout + 1], strides[nout + 1]},
        g{data[nout + 2], strides[nout + 2]};
    int next = nout + 3;
    Operand<T> w = has_w ? Operand<T>{data[next], strides[next]}
                         : Operand<T>{reinterpret_cast<const char*>(&one), 0};
    if (has_w) ++next;
    Operand<T> pw = has_pw ? Operand<T>{data[next], strides[next]}
                           : Operand<T>{reinterpret_cast<const char*>(&one), 0};
    const int64_t sz = sizeof(T);
    const bool contiguous = x.s == sz && t.s == sz && (g.s == sz || g.s == 0) &&
                            (!has_w || w.s == sz) && (!has_pw || pw.s == sz) &&
                            (!gx || sgx == sz) && (!gt || sgt == sz);
    if (contiguous) {
      with_weights<Op>(has_w, has_pw, [&](auto kw, auto kpw) {
        contiguous_backward<T, decltype(kw)::value, decltype(kpw)::value>(
            op, reinterpret_cast<const T*>(x.p), reinterpret_cast<const T*>(t.p),
            reinterpret_cast<const T*>(g.p), g.s == 0 ? 0 : 1, reinterpret_cast<const T*>(w.p),
            reinterpret_cast<const T*>(pw.p), reinterpret_cast<T*>(gx), reinterpret_cast<T*>(gt),
            n);
        return 0;
      });
      return;
    }
    for (int64_t k = 0; k < n; ++k) {
      const T xv = x.at(k), tv = t.at(k), wv = w.at(k), pv = pw.at(k), gv = g.at(k);
      if (gx) *reinterpret_cast<T*>(gx + k * sgx) = gv * op.dx(xv, tv, wv, pv);
      if (gt) *reinterpret_cast<T*>(gt + k * sgt) = gv * op.dt(xv, tv, wv, pv);
    }
  });
}

// Calls f(op) with the loss struct of `kind` for element type T.
template <typename T, typename F>
decltype(auto) with_loss(PointwiseLoss kind, double param, F&& f) {
  const T p = static_cast<T>(param);
  switch (kind) {
    case PointwiseLoss::MSE:
      return f(Mse<T>{p});
    case PointwiseLoss::L1:
      return f(L1<T>{p});
    case PointwiseLoss::SmoothL1:
      return f(SmoothL1<T>{p});
    case PointwiseLoss::Huber:
      return f(Huber<T>{p});
    case PointwiseLoss::BCE:
      return f(Bce<T>{p});
    case PointwiseLoss::BCEWithLogits:
      break;
  }
  return f(BceLogits<T>{p});
}

double pointwise_loss_kernel(TensorIterator& iter, PointwiseLoss kind, double param, bool has_w,
                             bool has_pw) {
  const int in0 = iter.noutputs();
  return dispatch_dtype<kFloat32 | kFloat64>(
      iter.dtype(in0), pointwise_loss_name(kind), [&](auto tag) {
        using T = typename decltype(tag)::type;
        return with_loss<T>(kind, param, [&](const auto& op) {
          return forward<T>(iter, op, has_w, has_pw, kind == PointwiseLoss::BCE);
        });
      });
}

void pointwise_loss_backward_kernel(TensorIterator& iter, PointwiseLoss kind, double param,
                                    bool has_w, bool has_pw, bool need_x, bool need_t) {
  const int in0 = iter.noutputs();
  dispatch_dtype<kFloat32 | kFloat64>(iter.dtype(in0), pointwise_loss_name(kind), [&](auto tag) {
    using T = typename decltype(tag)::type;
    with_loss<T>(kind, param, [&](const auto& op) {
      backward<T>(iter, op, has_w, has_pw, need_x, need_t);
      return 0;
    });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(pointwise_loss_stub, CPU, pointwise_loss_kernel);
EMBER_REGISTER_KERNEL(pointwise_loss_backward_stub, CPU, pointwise_loss_backward_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
