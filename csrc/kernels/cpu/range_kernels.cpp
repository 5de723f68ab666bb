// CPU kernels for arange / range, linspace, logspace and the complex-from-real ops. The
// arithmetic follows PyTorch's CPU kernels step by step (including which type each step rounds
// to), so results match bit for bit where PyTorch is deterministic.
#include <cmath>
#include <complex>
#include <type_traits>

#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/loops.h"
#include "kernels/range_factories_stubs.h"

namespace ember {
namespace native {
namespace {

template <typename F>
void for_each_index(int64_t n, const F& f) {
  parallel_for(0, n, kGrainSize, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) f(i);
  });
}

void arange_kernel(const Tensor& out, const Scalar& start, const Scalar& step) {
  dispatch_dtype<kRealTypes>(out.dtype(), "arange", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* data = out.data<T>();
    if constexpr (std::is_integral_v<T>) {
      // Integer dtypes accumulate in int64 (wrapping like PyTorch for narrow types).
      const uint64_t s = static_cast<uint64_t>(start.to_int64());
      const uint64_t st = static_cast<uint64_t>(step.to_int64());
      for_each_index(out.numel(), [&](int64_t i) {
        data[i] = static_cast<T>(static_cast<int64_t>(s + st * static_cast<uint64_t>(i)));
      });
    } else {
      using A = acc_type<T>;  // float for 16-bit floats, else T; float32 uses double below
      using C = std::conditional_t<std::is_same_v<T, float>, double, A>;
      const C s = static_cast<C>(start.to_double()), st = static_cast<C>(step.to_double());
      for_each_index(out.numel(), [&](int64_t i) { data[i] = T(s + st * static_cast<C>(i)); });
    }
  });
}

// c10::Half / BFloat16 arithmetic rounds after every operation; reproduce that.
template <typename T>
inline T rounded(float v) {
  return T(v);
}

void linspace_kernel(const Tensor& out, const Scalar& start, const Scalar& end) {
  dispatch_dtype<kNumericTypes>(out.dtype(), "linspace", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* data = out.data<T>();
    const int64_t steps = out.numel();
    const T s = start.to<T>(), e = end.to<T>();
    if (steps == 1) {
      data[0] = s;
      return;
    }
    const int64_t halfway = steps / 2;
    if constexpr (std::is_integral_v<T>) {
      const double step = (static_cast<double>(e) - static_cast<double>(s)) / (steps - 1);
      for_each_index(steps, [&](int64_t i) {
        data[i] = i < halfway ? convert<T>(s + step * i) : convert<T>(e - step * (steps - i - 1));
      });
    } else if constexpr (is_reduced_float_v<T>) {
      const T diff = rounded<T>(float(e) - float(s));
      const T step = rounded<T>(float(diff) / float(T(float(steps - 1))));
      auto times = [&](int64_t k) { return float(rounded<T>(float(step) * float(T(float(k))))); };
      for_each_index(steps, [&](int64_t i) {
        data[i] = i < halfway ? rounded<T>(float(s) + times(i))
                              : rounded<T>(float(e) - times(steps - i - 1));
      });
    } else if constexpr (is_complex_v<T>) {
      using R = typename T::value_type;
      const T step = (e - s) / static_cast<R>(steps - 1);
      for_each_index(steps, [&](int64_t i) {
        data[i] =
            i < halfway ? s + step * static_cast<R>(i) : e - step * static_cast<R>(steps - i - 1);
      });
    } else {
      const T step = (e - s) / static_cast<T>(steps - 1);
      for_each_index(steps, [&](int64_t i) {
        data[i] =
            i < halfway ? s + step * static_cast<T>(i) : e - step * static_cast<T>(steps - i - 1);
      });
    }
  });
}

void logspace_kernel(const Tensor& out, const Scalar& start, const Scalar& end, double base) {
  dispatch_dtype<kNumericTypes>(out.dtype(), "logspace", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* data = out.data<T>();
    const int64_t steps = out.numel();
    const int64_t halfway = steps / 2;
    if constexpr (std::is_integral_v<T>) {
      const T s = start.to<T>(), e = end.to<T>();
      if (steps == 1) {
        data[0] = convert<T>(std::pow(base, static_cast<double>(s)));
        return;
      }
      const double step = static_cast<double>(e - s) / (steps - 1);
      for_each_index(steps, [&](int64_t i) {
        const double x = i < halfway ? s + step * i : e - step * (steps - i - 1);
        data[i] = convert<T>(std::pow(base, x));
      });
    } else if constexpr (is_complex_v<T>) {
      using R = typename T::value_type;
      const T s = start.to<T>(), e = end.to<T>();
      if (steps == 1) {
        data[0] = T(std::pow(base, std::complex<double>(s)));
        return;
      }
      const T step = (e - s) / static_cast<R>(steps - 1);
      for_each_index(steps, [&](int64_t i) {
        const T x =
            i < halfway ? s + step * static_cast<R>(i) : e - step * static_cast<R>(steps - i - 1);
        data[i] = T(std::pow(base, std::complex<double>(x)));
      });
    } else {
      using A = acc_type<T>;
      const A s = static_cast<A>(start.to<T>()), e = static_cast<A>(end.to<T>());
      if (steps == 1) {
        data[0] = T(static_cast<A>(std::pow(base, static_cast<double>(s))));
        return;
      }
      const A step = (e - s) / static_cast<A>(steps - 1);
      for_each_index(steps, [&](int64_t i) {
        const A x =
            i < halfway ? s + step * static_cast<A>(i) : e - step * static_cast<A>(steps - i - 1);
        data[i] = T(static_cast<A>(std::pow(base, static_cast<double>(x))));
      });
    }
  });
}

void complex_kernel(TensorIterator& iter) {
  dispatch_dtype<kFloat32 | kFloat64>(iter.dtype(1), "complex", [&](auto tag) {
    using T = typename decltype(tag)::type;
    cpu_kernel(iter, [](T re, T im) -> std::complex<T> { return {re, im}; });
  });
}

void polar_kernel(TensorIterator& iter) {
  dispatch_dtype<kFloat32 | kFloat64>(iter.dtype(1), "polar", [&](auto tag) {
    using T = typename decltype(tag)::type;
    cpu_kernel(iter, [](T r, T theta) -> std::complex<T> {
      return {r * std::cos(theta), r * std::sin(theta)};
    });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(arange_stub, CPU, arange_kernel);
EMBER_REGISTER_KERNEL(linspace_stub, CPU, linspace_kernel);
EMBER_REGISTER_KERNEL(logspace_stub, CPU, logspace_kernel);
EMBER_REGISTER_KERNEL(complex_stub, CPU, complex_kernel);
EMBER_REGISTER_KERNEL(polar_stub, CPU, polar_kernel);

}  // namespace native
}  // namespace ember
