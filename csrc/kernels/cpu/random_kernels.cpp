// CPU sampling kernels for the continuous and discrete distributions. Each kernel walks the
// Philox counter blocks an op reserved, in parallel chunks; value v comes from block
// v / values_per_block only, so results do not depend on the thread count.
#include <cmath>

#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/random_utils.h"
#include "kernels/random_stubs.h"

namespace ember {
namespace native {
namespace {

void uniform_kernel(const Tensor& out, double from, double to, PhiloxState st) {
  dispatch_dtype<kFloatingAndComplex>(out.dtype(), "uniform_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = real_of_t<T>;  // complex tensors are filled as interleaved real pairs
    R* data = reinterpret_cast<R*>(out.data_ptr());
    const int64_t n = out.numel() * (is_complex_v<T> ? 2 : 1);
    if constexpr (std::is_same_v<R, double>) {
      const double span = to - from;
      for_each_block(n, 2, st, [&](int64_t i, int count, const PhiloxBlock& w) {
        for (int k = 0; k < count; ++k)
          data[i + k] = from + uniform_double(w[2 * k], w[2 * k + 1]) * span;
      });
    } else {
      const float lo = static_cast<float>(from), span = static_cast<float>(to - from);
      for_each_block(n, 4, st, [&](int64_t i, int count, const PhiloxBlock& w) {
        for (int k = 0; k < count; ++k) data[i + k] = R(lo + uniform_bits<R>(w[k]) * span);
      });
    }
  });
}

void normal_kernel(const Tensor& out, double mean, double std, PhiloxState st) {
  dispatch_dtype<kFloatingAndComplex>(out.dtype(), "normal_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = real_of_t<T>;
    R* data = reinterpret_cast<R*>(out.data_ptr());
    const int64_t n = out.numel() * (is_complex_v<T> ? 2 : 1);
    if constexpr (std::is_same_v<R, double>) {
      for_each_block(n, 2, st, [&](int64_t i, int count, const PhiloxBlock& w) {
        double z[2];
        box_muller(uniform_double(w[0], w[1]), uniform_double(w[2], w[3]), z);
        for (int k = 0; k < count; ++k) data[i + k] = mean + std * z[k];
      });
    } else {
      const float m = static_cast<float>(mean), s = static_cast<float>(std);
      for_each_block(n, 4, st, [&](int64_t i, int count, const PhiloxBlock& w) {
        float z[4];
        box_muller(uniform_bits<float>(w[0]), uniform_bits<float>(w[1]), z);
        box_muller(uniform_bits<float>(w[2]), uniform_bits<float>(w[3]), z + 2);
        for (int k = 0; k < count; ++k) data[i + k] = R(m + s * z[k]);
      });
    }
  });
}

void random_int_kernel(const Tensor& out, int64_t from, uint64_t range, PhiloxState st) {
  dispatch_dtype<kRealAndBool>(out.dtype(), "random_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* data = out.data<T>();
    const int64_t n = out.numel();
    // Two's-complement wrap-around gives from + offset for any offset below range.
    auto value = [from](uint64_t offset) {
      return convert<T>(static_cast<int64_t>(static_cast<uint64_t>(from) + offset));
    };
    if (random_int_values_per_block(range) == 4) {
      for_each_block(n, 4, st, [&](int64_t i, int count, const PhiloxBlock& w) {
        for (int k = 0; k < count; ++k) data[i + k] = value(w[k] % range);
      });
    } else {
      for_each_block(n, 2, st, [&](int64_t i, int count, const PhiloxBlock& w) {
        for (int k = 0; k < count; ++k) {
          const uint64_t r = (uint64_t(w[2 * k + 1]) << 32) | w[2 * k];
          data[i + k] = value(range == 0 ? r : r % range);
        }
      });
    }
  });
}

void bernoulli_kernel(const Tensor& out, const Tensor& p_tensor, double p_scalar, PhiloxState st) {
  dispatch_dtype<kRealAndBool>(out.dtype(), "bernoulli_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* data = out.data<T>();
    const double* p = p_tensor.defined() ? p_tensor.data<double>() : nullptr;
    constexpr double kInv2Pow32 = 1.0 / 4294967296.0;
    for_each_block(out.numel(), 4, st, [&](int64_t i, int count, const PhiloxBlock& w) {
      for (int k = 0; k < count; ++k) {
        const double prob = p ? p[i + k] : p_scalar;
        data[i + k] = convert<T>(double(w[k]) * kInv2Pow32 < prob);
      }
    });
  });
}

void continuous_kernel(const Tensor& out, Continuous kind, double a, double b, PhiloxState st) {
  dispatch_dtype<kRealTypes>(out.dtype(), "random", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* data = out.data<T>();
    for_each_block(out.numel(), 2, st, [&](int64_t i, int count, const PhiloxBlock& w) {
      const double u0 = uniform_double(w[0], w[1]), u1 = uniform_double(w[2], w[3]);
      double v[2];
      switch (kind) {
        case Continuous::Exponential:  // a = lambda; -log(1 - u) / lambda
          v[0] = -std::log1p(-u0) / a;
          v[1] = -std::log1p(-u1) / a;
          break;
        case Continuous::Geometric:  // a = p; trials up to the first success, >= 1
          v[0] = std::ceil(std::log1p(-u0) / std::log1p(-a));
          v[1] = std::ceil(std::log1p(-u1) / std::log1p(-a));
          if (v[0] < 1) v[0] = 1;
          if (v[1] < 1) v[1] = 1;
          break;
        case Continuous::LogNormal:  // a = mean, b = std of the underlying normal
          box_muller(u0, u1, v);
          v[0] = std::exp(a + b * v[0]);
          v[1] = std::exp(a + b * v[1]);
          break;
        case Continuous::Cauchy:  // a = median, b = sigma
          v[0] = a + b * std::tan(M_PI * (u0 - 0.5));
          v[1] = a + b * std::tan(M_PI * (u1 - 0.5));
          break;
      }
      for (int k = 0; k < count; ++k) data[i + k] = convert<T>(v[k]);
    });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(uniform_stub, CPU, uniform_kernel);
EMBER_REGISTER_KERNEL(normal_stub, CPU, normal_kernel);
EMBER_REGISTER_KERNEL(random_int_stub, CPU, random_int_kernel);
EMBER_REGISTER_KERNEL(bernoulli_stub, CPU, bernoulli_kernel);
EMBER_REGISTER_KERNEL(continuous_stub, CPU, continuous_kernel);

}  // namespace native
}  // namespace ember
