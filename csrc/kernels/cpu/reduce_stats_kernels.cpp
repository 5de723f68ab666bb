// var / std / var_mean / std_mean (Welford-Chan), vector norms and logsumexp.
#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/reduce_ops.h"
#include "kernels/cpu/reduce_vec.h"
#include "kernels/reduce_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

template <typename T>
using real_t = real_of_t<acc_type<T>>;

template <typename R>
inline R abs2(R x) {
  return x * x;
}
template <typename R>
inline R abs2(std::complex<R> z) {
  return z.real() * z.real() + z.imag() * z.imag();
}

// ---- var / std ---------------------------------------------------------------------------

// Count, mean and sum of squared deviations, in double (complex<double> means for complex).
template <typename T>
struct WelfordAcc {
  using M = std::conditional_t<is_complex_v<T>, std::complex<double>, double>;
  M mean = M(0);
  double m2 = 0;
  double n = 0;
};

// Note [Variance Accuracy]: a contiguous run is cut into 256-element blocks; each block's mean
// and squared deviations are computed two-pass in the input's compute type (vectorised), and
// blocks merge with Chan's formula in double. Strided folds use Welford's update in double.
// Both stay accurate when the mean is large compared with the spread, where the textbook
// E[x^2] - E[x]^2 loses every digit.
// The dtype of var/std/norm results: the input's, or its real counterpart for complex.
template <typename T>
using real_out_t = std::conditional_t<is_complex_v<T>, real_of_t<T>, T>;

template <typename T>
struct VarOps : ReduceOpsBase<VarOps<T>, T, WelfordAcc<T>, real_out_t<T>> {
  static constexpr bool kPairwise = true;
  using Acc = WelfordAcc<T>;
  using M = typename Acc::M;
  using C = acc_type<T>;  // block compute type
  using Real = real_out_t<T>;
  double correction = 1;
  bool take_sqrt = false;
  bool with_mean = false;

  Acc identity() const { return Acc{}; }
  Acc fold(Acc a, T x) const {
    const M v = M(load<C>(x));
    a.n += 1;
    const M delta = v - a.mean;
    a.mean += delta / a.n;
    if constexpr (is_complex_v<T>) {
      a.m2 += std::real(std::conj(delta) * (v - a.mean));
    } else {
      a.m2 += delta * (v - a.mean);
    }
    return a;
  }
  Acc combine(const Acc& a, const Acc& b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    Acc r;
    r.n = a.n + b.n;
    const M delta = b.mean - a.mean;
    r.mean = a.mean + delta * (b.n / r.n);
    r.m2 = a.m2 + b.m2 + abs2(delta) * (a.n * b.n / r.n);
    return r;
  }
  Acc fold_run(Acc acc, const char* p, int64_t stride, int64_t n) const {
    if (stride != static_cast<int64_t>(sizeof(T))) {
      for (int64_t i = 0; i < n; ++i) acc = fold(acc, *reinterpret_cast<const T*>(p + i * stride));
      return acc;
    }
    constexpr int64_t kBlock = 256;
    using RC = real_of_t<C>;
    const T* x = reinterpret_cast<const T*>(p);
    for (int64_t i = 0; i < n; i += kBlock) {
      const int64_t len = std::min(kBlock, n - i);
      const C bmean = cascade_sum<C, T>(reinterpret_cast<const char*>(x + i), sizeof(T), len,
                                        [](auto v) { return load<C>(v); }) /
                      C(static_cast<RC>(len));
      const RC bm2 = cascade_sum<RC, T>(reinterpret_cast<const char*>(x + i), sizeof(T), len,
                                        [bmean](auto v) { return abs2(load<C>(v) - bmean); });
      Acc b;
      b.n = static_cast<double>(len);
      b.mean = M(bmean);
      b.m2 = static_cast<double>(bm2);
      acc = combine(acc, b);
    }
    return acc;
  }
  Real project(const Acc& a) const {
    const double v = a.m2 / std::max(0.0, a.n - correction);
    return convert<Real>(take_sqrt ? std::sqrt(v) : v);
  }
  void write(char* out0, char* out1, const Acc& a) const {
    *reinterpret_cast<Real*>(out0) = project(a);
    if (with_mean) {
      const double nan = std::numeric_limits<double>::quiet_NaN();
      M mean = a.mean;
      if (a.n == 0) {
        if constexpr (is_complex_v<M>) {
          mean = M(nan, nan);
        } else {
          mean = nan;
        }
      }
      *reinterpret_cast<T*>(out1) = convert<T>(mean);
    }
  }
};

void var_kernel(TensorIterator& iter, double correction, bool take_sqrt) {
  dispatch_dtype<kFloatingAndComplex>(iter.dtype(iter.noutputs()), "var", [&](auto tag) {
    using T = typename decltype(tag)::type;
    VarOps<T> ops;
    ops.correction = correction;
    ops.take_sqrt = take_sqrt;
    ops.with_mean = iter.noutputs() == 2;
    run_reduction(iter, ops);
  });
}

// ---- norms -------------------------------------------------------------------------------

template <typename T>
inline real_t<T> abs_of(T x) {
  if constexpr (is_complex_v<T>) {
    return std::abs(x);
  } else {
    return std::abs(load<acc_type<T>>(x));
  }
}

// max / min of |x| with NaN propagation (the inf and -inf norms).
template <typename T, bool IsMax, typename Out>
struct AbsExtremumOps : ReduceOpsBase<AbsExtremumOps<T, IsMax, Out>, T, real_t<T>, Out> {
  using A = real_t<T>;
  A identity() const { return IsMax ? A(0) : std::numeric_limits<A>::infinity(); }
  static A pick(A a, A x) { return ((IsMax ? x > a : x < a) || x != x) ? x : a; }
  A fold(A a, T x) const { return pick(a, abs_of(x)); }
  A combine(A a, A b) const { return pick(a, b); }
  Out project(A a) const { return convert<Out>(a); }
};

template <typename T>
void norm_impl(TensorIterator& iter, NormOrder p) {
  using R = real_t<T>;
  using Out = real_out_t<T>;
  auto out = [](R a) { return convert<Out>(a); };
  using K = NormOrder::Kind;
  switch (p.kind) {
    case K::Fro:
      run_map_sum<T, R, Out>(
          iter, [](auto x) { return abs2(load<acc_type<T>>(x)); },
          [](R a) { return convert<Out>(std::sqrt(a)); });
      return;
    case K::Zero:
      run_map_sum<T, R, Out>(
          iter, [](auto x) { return R(nonzero(x)); }, out);
      return;
    case K::Inf:
      run_reduction(iter, AbsExtremumOps<T, true, Out>{});
      return;
    case K::NegInf:
      run_reduction(iter, AbsExtremumOps<T, false, Out>{});
      return;
    case K::P:
      if (p.p == 1.0) {
        run_map_sum<T, R, Out>(
            iter, [](auto x) { return abs_of(x); }, out);
      } else if (p.p == 2.0) {
        run_map_sum<T, R, Out>(
            iter, [](auto x) { return abs2(load<acc_type<T>>(x)); },
            [](R a) { return convert<Out>(std::sqrt(a)); });
      } else if (p.p == 3.0) {
        // |x|^3 by multiplication: std::pow per element costs several times more.
        const R inv = static_cast<R>(1.0 / 3.0);
        run_map_sum<T, R, Out>(
            iter,
            [](auto x) {
              const R a = abs_of(x);
              return a * a * a;
            },
            [inv](R a) { return convert<Out>(std::pow(a, inv)); });
      } else {
        const R e = static_cast<R>(p.p), inv = static_cast<R>(1.0 / p.p);
        run_map_sum<T, R, Out>(
            iter, [e](auto x) { return std::pow(abs_of(x), e); },
            [inv](R a) { return convert<Out>(std::pow(a, inv)); });
      }
      return;
  }
}

void norm_kernel(TensorIterator& iter, NormOrder p) {
  dispatch_dtype<kFloatingAndComplex>(
      iter.dtype(1), "norm", [&](auto tag) { norm_impl<typename decltype(tag)::type>(iter, p); });
}

// ---- logsumexp ---------------------------------------------------------------------------

// Running maximum m (of the real parts) and s = sum(exp(x - m)): log-sum-exp is m + log(s).
template <typename T>
struct LseAcc {
  using R = real_t<T>;
  using S = acc_type<T>;
  R m = -std::numeric_limits<R>::infinity();
  S s = S(0);
};

template <typename T>
struct LogSumExpOps : ReduceOpsBase<LogSumExpOps<T>, T, LseAcc<T>, T> {
  static constexpr bool kPairwise = true;
  using Acc = LseAcc<T>;
  using R = typename Acc::R;
  using S = typename Acc::S;
  static R real_of(S v) {
    if constexpr (is_complex_v<S>) {
      return v.real();
    } else {
      return v;
    }
  }
  static S nan_value() {
    const R nan = std::numeric_limits<R>::quiet_NaN();
    if constexpr (is_complex_v<S>) {
      return S(nan, nan);
    } else {
      return nan;
    }
  }
  static Acc nan_acc() {
    Acc a;
    a.m = std::numeric_limits<R>::quiet_NaN();
    a.s = nan_value();
    return a;
  }
  Acc identity() const { return Acc{}; }
  Acc fold(Acc a, T x) const {
    Acc b;
    const S v = load<S>(x);
    b.m = real_of(v);
    if (is_nan_value(v)) return nan_acc();
    if (b.m == -std::numeric_limits<R>::infinity()) return a;
    b.s = (b.m == std::numeric_limits<R>::infinity()) ? S(1) : std::exp(v - S(b.m));
    return combine(a, b);
  }
  Acc combine(Acc a, Acc b) const {
    if (a.m != a.m || b.m != b.m) return nan_acc();
    if (a.m < b.m) std::swap(a, b);
    if (std::isinf(a.m)) return a;  // all -inf (s = 0), or +inf dominates
    a.s += b.s * S(std::exp(b.m - a.m));
    return a;
  }
  // Two passes over a run: its maximum, then one exp per element.
  Acc fold_run(Acc acc, const char* p, int64_t stride, int64_t n) const {
    if constexpr (std::is_same_v<S, float>) {
      if (stride == static_cast<int64_t>(sizeof(T)) && n >= 64) {
        // Vectorised: lane-wise maximum, then a cascade sum of vexpf(x - max).
        ExtremumOps<T, true> ext;
        Acc run;
        run.m = ext.fold_run(ext.identity(), p, stride, n);
        if (run.m != run.m) return nan_acc();
        if (std::isinf(run.m)) {
          run.s = run.m > 0 ? S(1) : S(0);
          return combine(acc, run);
        }
        const float m = run.m;
        run.s =
            cascade_sum<float, T>(p, stride, n, [m](auto v) { return vexpf(load<float>(v) - m); });
        return combine(acc, run);
      }
    }
    Acc run;
    for (int64_t i = 0; i < n; ++i) {
      const S v = load<S>(*reinterpret_cast<const T*>(p + i * stride));
      if (is_nan_value(v)) return nan_acc();
      run.m = std::max(run.m, real_of(v));
    }
    if (std::isinf(run.m)) {
      run.s = run.m > 0 ? S(1) : S(0);
      return combine(acc, run);
    }
    const S shift = S(run.m);
    for (int64_t i = 0; i < n; ++i) {
      run.s += std::exp(load<S>(*reinterpret_cast<const T*>(p + i * stride)) - shift);
    }
    return combine(acc, run);
  }
  T project(const Acc& a) const {
    if (a.m != a.m) return convert<T>(nan_value());
    if (std::isinf(a.m)) return convert<T>(S(a.m));
    return convert<T>(S(a.m) + std::log(a.s));
  }
};

void logsumexp_kernel(TensorIterator& iter) {
  dispatch_dtype<kFloatingAndComplex>(iter.dtype(1), "logsumexp", [&](auto tag) {
    run_reduction(iter, LogSumExpOps<typename decltype(tag)::type>{});
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(var_stub, CPU, var_kernel);
EMBER_REGISTER_KERNEL(norm_stub, CPU, norm_kernel);
EMBER_REGISTER_KERNEL(logsumexp_stub, CPU, logsumexp_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
