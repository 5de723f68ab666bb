// Scans along one dim: cumsum, cumprod, logcumsumexp, cummax / cummin.
//
// make_dim_iterator visits every position of the other dims; the kernel walks the scanned dim.
// When consecutive positions are contiguous (the scanned dim is not the innermost), blocks of
// positions advance together row by row, so the inner loop is elementwise and vectorises.
#include <cmath>

#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/reduce_ops.h"
#include "kernels/reduce_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

// PyTorch's CPU scan accumulators: double for float, float for 16-bit floats, complex<double>
// for complex64; integers wrap in uint64 (see sum_acc_t).
template <typename T>
struct ScanAcc {
  using type = sum_acc_t<T>;
};
template <>
struct ScanAcc<float> {
  using type = double;
};
template <>
struct ScanAcc<complex64> {
  using type = complex128;
};
template <typename T>
using scan_acc_t = typename ScanAcc<T>::type;

// out[r] = acc_r with acc_r = step(acc_{r-1}, in[r]) and acc_{-1} = init, for every position.
template <typename In, typename Out, typename Acc, typename Step>
void scan_loop(TensorIterator& iter, const DimWalk& walk, Acc init, const Step& step) {
  const int64_t R = walk.size, so = walk.strides[0], si = walk.strides[1];
  if (R == 0) return;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / R);
  iter.for_each(
      [&](char** data, const int64_t* strides, int64_t n) {
        char* out = data[0];
        const char* in = data[1];
        if (n > 1 && strides[0] == static_cast<int64_t>(sizeof(Out)) &&
            strides[1] == static_cast<int64_t>(sizeof(In))) {
          constexpr int64_t kBlock = 256;
          Acc acc[kBlock];
          for (int64_t j0 = 0; j0 < n; j0 += kBlock) {
            const int64_t len = std::min(kBlock, n - j0);
            std::fill(acc, acc + len, init);
            for (int64_t r = 0; r < R; ++r) {
              const In* x = reinterpret_cast<const In*>(in + r * si) + j0;
              Out* o = reinterpret_cast<Out*>(out + r * so) + j0;
              for (int64_t j = 0; j < len; ++j) {
                acc[j] = step(acc[j], x[j]);
                o[j] = from_acc<Out>(acc[j]);
              }
            }
          }
          return;
        }
        for (int64_t k = 0; k < n; ++k) {
          const char* x = in + k * strides[1];
          char* o = out + k * strides[0];
          Acc acc = init;
          for (int64_t r = 0; r < R; ++r) {
            acc = step(acc, *reinterpret_cast<const In*>(x + r * si));
            *reinterpret_cast<Out*>(o + r * so) = from_acc<Out>(acc);
          }
        }
      },
      grain);
}

template <typename In, typename Out, bool IsProd>
void cum_impl(TensorIterator& iter, const DimWalk& walk) {
  using Acc = scan_acc_t<In>;
  if constexpr (IsProd) {
    scan_loop<In, Out>(iter, walk, Acc(1), [](Acc a, In x) { return a * to_acc<Acc>(x); });
  } else {
    scan_loop<In, Out>(iter, walk, Acc(0), [](Acc a, In x) { return a + to_acc<Acc>(x); });
  }
}

// Bool and integer inputs may scan straight into int64; otherwise input and output agree.
template <bool IsProd>
void cum_kernel(TensorIterator& iter, const DimWalk& walk) {
  const ScalarType in = iter.dtype(1), out = iter.dtype(0);
  const char* name = IsProd ? "cumprod" : "cumsum";
  if (out == ScalarType::Int64 && is_integral(in, /*include_bool=*/true)) {
    dispatch_dtype<kIntegralAndBool>(in, name, [&](auto tag) {
      cum_impl<typename decltype(tag)::type, int64_t, IsProd>(iter, walk);
    });
    return;
  }
  dispatch_dtype<kNumericTypes>(in, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    cum_impl<T, T, IsProd>(iter, walk);
  });
}

void cumsum_kernel(TensorIterator& iter, const DimWalk& walk) {
  cum_kernel<false>(iter, walk);
}
void cumprod_kernel(TensorIterator& iter, const DimWalk& walk) {
  cum_kernel<true>(iter, walk);
}

// log(1 + z) without cancellation for small |z| (std has no complex log1p).
template <typename R>
std::complex<R> log1p_of(std::complex<R> z) {
  const R x = z.real(), y = z.imag();
  const R theta = std::atan2(y, x + R(1));
  if (std::abs(z) < R(0.5)) {
    const R r = x * (R(2) + x) + y * y;  // |1 + z|^2 - 1
    if (r == 0) return {x, theta};
    return {R(0.5) * std::log1p(r), theta};
  }
  return {std::log(std::hypot(x + R(1), y)), theta};
}

// log(exp(x) + exp(y)) as PyTorch's _log_add_exp_helper: NaN is infectious, equal infinities
// are returned as they are.
template <typename R>
R log_add_exp(R x, R y) {
  const R lo = std::isnan(y) ? y : std::min(x, y);
  const R hi = std::isnan(y) ? y : std::max(x, y);
  if (lo != hi || std::isfinite(lo)) return std::log1p(std::exp(lo - hi)) + hi;
  return x;
}

template <typename R>
std::complex<R> log_add_exp(std::complex<R> x, std::complex<R> y) {
  auto is_nan = [](std::complex<R> z) { return std::isnan(z.real()) || std::isnan(z.imag()); };
  // Order by real part, a NaN counting as the largest.
  auto less = [&](std::complex<R> a, std::complex<R> b) {
    if (is_nan(b)) return false;
    if (is_nan(a)) return true;
    return a.real() < b.real();
  };
  std::complex<R> lo = x, hi = y;
  if (less(y, x)) std::swap(lo, hi);
  if (is_nan(lo)) {
    const R nan = std::numeric_limits<R>::quiet_NaN();
    return {nan, nan};
  }
  if (!std::isfinite(lo.real()) && lo.real() == hi.real()) {
    if (lo.real() < 0) return lo;
    return std::log(std::exp(lo) + std::exp(hi));
  }
  return log1p_of(std::exp(lo - hi)) + hi;
}

void logcumsumexp_kernel(TensorIterator& iter, const DimWalk& walk) {
  dispatch_dtype<kFloatingAndComplex>(iter.dtype(1), "logcumsumexp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = scan_acc_t<T>;
    using R = real_of_t<Acc>;
    const Acc init = Acc(-std::numeric_limits<R>::infinity());
    scan_loop<T, T>(iter, walk, init, [](Acc a, T x) { return log_add_exp(load<Acc>(x), a); });
  });
}

// cummax / cummin: the running extreme and the index where it was last attained. Ties and NaN
// move the index forward (x >= best, or x is NaN), as PyTorch.
template <typename T, bool IsMax>
void cummaxmin_impl(TensorIterator& iter, const DimWalk& walk) {
  using A = acc_type<T>;
  const int64_t R = walk.size, sv = walk.strides[0], sx = walk.strides[1], si = walk.strides[2];
  if (R == 0) return;
  auto take = [](A x, A best) {
    if constexpr (std::is_floating_point_v<A>) {
      return (IsMax ? x >= best : x <= best) || x != x;
    } else {
      return IsMax ? x >= best : x <= best;
    }
  };
  const int64_t grain = std::max<int64_t>(1, kGrainSize / R);
  iter.for_each(
      [&](char** data, const int64_t* strides, int64_t n) {
        for (int64_t k = 0; k < n; ++k) {
          char* v = data[0] + k * strides[0];
          char* ix = data[1] + k * strides[1];
          const char* in = data[2] + k * strides[2];
          A best = load<A>(*reinterpret_cast<const T*>(in));
          int64_t best_i = 0;
          for (int64_t r = 0; r < R; ++r) {
            const A x = load<A>(*reinterpret_cast<const T*>(in + r * si));
            // Once NaN, the value stays NaN; later NaNs still move the index.
            if (take(x, best)) {
              best = x;
              best_i = r;
            }
            *reinterpret_cast<T*>(v + r * sv) = static_cast<T>(best);
            *reinterpret_cast<int64_t*>(ix + r * sx) = best_i;
          }
        }
      },
      grain);
}

void cummaxmin_kernel(TensorIterator& iter, const DimWalk& walk, bool is_max) {
  dispatch_dtype<kRealAndBool>(iter.dtype(2), is_max ? "cummax" : "cummin", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (is_max) {
      cummaxmin_impl<T, true>(iter, walk);
    } else {
      cummaxmin_impl<T, false>(iter, walk);
    }
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(cumsum_stub, CPU, cumsum_kernel);
EMBER_REGISTER_KERNEL(cumprod_stub, CPU, cumprod_kernel);
EMBER_REGISTER_KERNEL(logcumsumexp_stub, CPU, logcumsumexp_kernel);
EMBER_REGISTER_KERNEL(cummaxmin_stub, CPU, cummaxmin_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
