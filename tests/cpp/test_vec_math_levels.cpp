// The vectorised unary kernels at every CPU capability level this machine supports, called
// through each level's own registered kernel (DispatchStub::cpu_kernel_at), against long double
// references: the maximum ulp error over random values across each function's domain, every
// special value (0, -0, inf, nan, subnormals, the edges of the domain), odd lengths whose tail
// is shorter than a vector, and strided input (the gathered path).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/cpu_capability.h"
#include "kernels/nn/activation_stubs.h"
#include "kernels/unary_stubs.h"
#include "ops/creation.h"
#include "ops/elementwise_common.h"
#include "ops/views.h"

using namespace ember;
using namespace ember::native;

namespace {

using Ref = long double (*)(long double);

template <typename T>
double ulp_error(T got, long double want) {
  using L = std::numeric_limits<T>;
  if (std::isnan(want)) return std::isnan(got) ? 0 : 1e30;
  const T rounded = static_cast<T>(want);
  if (std::isinf(rounded) || std::isinf(got)) {
    // Results beyond the format's range: both must overflow alike.
    return got == rounded ? 0 : 1e30;
  }
  if (std::isnan(got)) return 1e30;
  if (std::fabs(want) < L::min()) {
    return static_cast<double>(std::fabs(got - want) / L::denorm_min());
  }
  int e;
  std::frexp(static_cast<double>(want), &e);
  return static_cast<double>(std::fabs(got - want) / std::ldexp(1.0L, e - L::digits));
}

template <typename T>
std::vector<T> special_values() {
  using L = std::numeric_limits<T>;
  return {T(0),
          T(-0.0),
          L::infinity(),
          -L::infinity(),
          L::quiet_NaN(),
          L::min(),
          -L::min(),
          L::denorm_min(),
          -L::denorm_min(),
          L::max(),
          -L::max(),
          T(1),
          T(-1),
          T(0.5),
          T(-0.5),
          T(2),  // interval edges of the piecewise erf (z = k / 4; 2 switches table halves)
          T(-2),
          T(0.25),
          T(3.75),
          T(4),
          T(-4),
          T(1e-30),
          T(-1e-30),
          T(88.5),
          T(-88.5),
          T(103.9),
          T(-103.9),
          T(709.5),
          T(-745.0),
          T(1e10),
          T(-1e10),
          std::nextafter(T(1), T(0)),
          std::nextafter(T(-1), T(0))};
}

template <typename T>
ScalarType dtype_of() {
  return sizeof(T) == 4 ? ScalarType::Float32 : ScalarType::Float64;
}

// Runs `stub`'s kernel compiled for `level` on `input` (a strided view when `stride` > 1).
template <typename T>
std::vector<T> run_at(const DispatchStub<IterFn>& stub, CpuCapability level,
                      const std::vector<T>& input, int64_t stride) {
  const int64_t n = static_cast<int64_t>(input.size());
  Tensor base = empty({n * stride}, dtype_of<T>());
  T* p = static_cast<T*>(base.data_ptr());
  for (int64_t i = 0; i < n * stride; ++i) p[i] = T(0);
  for (int64_t i = 0; i < n; ++i) p[i * stride] = input[i];
  Tensor x = stride == 1 ? base : as_strided(base, {n}, {stride}, 0);
  auto iter = build_elementwise("vec_math_levels", ResultKind::PromoteToFloat, Tensor(), {x});
  auto kernel = stub.cpu_kernel_at(level);
  REQUIRE(kernel != nullptr);
  kernel(iter);
  Tensor out = finish_elementwise(iter, Tensor());
  std::vector<T> result(n);
  std::memcpy(result.data(), out.data_ptr(), sizeof(T) * n);
  return result;
}

struct Case {
  const char* name;
  const DispatchStub<IterFn>* stub;
  Ref ref;
  double lo, hi;  // where the random inputs come from
  double float_ulp, double_ulp;
};

long double ref_sigmoid(long double x) {
  return 1.0L / (1.0L + std::exp(-x));
}
long double ref_rsqrt(long double x) {
  return 1.0L / std::sqrt(x);
}

std::vector<Case> cases() {
  // Bounds: SLEEF's documented bound for the entry point used (vec/vec_math.h) plus the final
  // rounding to the format (0.5); Ember's own exp, tanh and sigmoid: 2 with FMA, 3 without (the
  // `default` level rounds every multiply-add twice); Ember's own float32 log1p (SLEEF's 3.5-ulp
  // log plus a correction), erf (a series, then 1 - erfc; piecewise polynomials from avx2 up),
  // erfc (Numerical Recipes' fit, 1.2e-7 relative, with e^(-x^2) from an exact square; piecewise
  // polynomials below 4 from avx2 up) and expm1 (1.41 ulp worst with FMA, 1.51 without): the
  // worst measured plus a margin.
  return {
      {"exp", &exp_stub, [](long double x) { return std::exp(x); }, -110, 90, 3, 3},
      {"exp2", &exp2_stub, [](long double x) { return std::exp2(x); }, -150, 130, 1.5, 1.5},
      {"expm1", &expm1_stub, [](long double x) { return std::expm1(x); }, -20, 20, 2, 1.5},
      {"log", &log_stub, [](long double x) { return std::log(x); }, 0, 1e6, 4, 1.5},
      {"log2", &log2_stub, [](long double x) { return std::log2(x); }, 0, 1e6, 4, 1.5},
      {"log10", &log10_stub, [](long double x) { return std::log10(x); }, 0, 1e6, 1.5, 1.5},
      {"log1p", &log1p_stub, [](long double x) { return std::log1p(x); }, -1, 1e3, 4, 1.5},
      {"sin", &sin_stub, [](long double x) { return std::sin(x); }, -100, 100, 4, 1.5},
      {"cos", &cos_stub, [](long double x) { return std::cos(x); }, -100, 100, 4, 1.5},
      {"tan", &tan_stub, [](long double x) { return std::tan(x); }, -10, 10, 4, 1.5},
      {"asin", &asin_stub, [](long double x) { return std::asin(x); }, -1, 1, 4, 1.5},
      {"acos", &acos_stub, [](long double x) { return std::acos(x); }, -1, 1, 4, 1.5},
      {"atan", &atan_stub, [](long double x) { return std::atan(x); }, -100, 100, 4, 1.5},
      {"sinh", &sinh_stub, [](long double x) { return std::sinh(x); }, -80, 80, 4, 1.5},
      {"cosh", &cosh_stub, [](long double x) { return std::cosh(x); }, -80, 80, 4, 1.5},
      {"tanh", &tanh_stub, [](long double x) { return std::tanh(x); }, -10, 10, 3, 3},
      {"asinh", &asinh_stub, [](long double x) { return std::asinh(x); }, -1e4, 1e4, 1.5, 1.5},
      {"acosh", &acosh_stub, [](long double x) { return std::acosh(x); }, 1, 1e4, 1.5, 1.5},
      {"atanh", &atanh_stub, [](long double x) { return std::atanh(x); }, -1, 1, 1.5, 1.5},
      {"erf", &erf_stub, [](long double x) { return std::erf(x); }, -5, 5, 3, 1.5},
      {"erfc", &erfc_stub, [](long double x) { return std::erfc(x); }, -5, 9, 7, 2},
      {"sigmoid", &sigmoid_stub, ref_sigmoid, -100, 40, 3, 3},
      {"sqrt", &sqrt_stub, [](long double x) { return std::sqrt(x); }, 0, 1e6, 0.5, 0.5},
      {"rsqrt", &rsqrt_stub, ref_rsqrt, 0, 1e6, 1.5, 1.5},
  };
}

template <typename T>
void check_case(const Case& c, CpuCapability level) {
  std::mt19937_64 rng(1234);
  std::uniform_real_distribution<double> uniform(c.lo, c.hi);
  std::vector<T> input = special_values<T>();
  for (int i = 0; i < 100000; ++i) input.push_back(static_cast<T>(uniform(rng)));
  // Small magnitudes, where relative accuracy is hardest for the odd functions.
  for (int i = 0; i < 2000; ++i) input.push_back(static_cast<T>(uniform(rng) * 1e-6));
  input.push_back(T(0.25));  // an odd length: the last vector is partial
  const double bound = sizeof(T) == 4 ? c.float_ulp : c.double_ulp;
  for (int64_t stride : {1, 3}) {
    const std::vector<T> got = run_at<T>(*c.stub, level, input, stride);
    double worst = 0;
    T worst_x = 0;
    for (size_t i = 0; i < input.size(); ++i) {
      const double err = ulp_error<T>(got[i], c.ref(static_cast<long double>(input[i])));
      if (err > worst) {
        worst = err;
        worst_x = input[i];
      }
    }
    INFO(c.name << " " << (sizeof(T) == 4 ? "float32" : "float64") << " at "
                << cpu_capability_name(level) << ", stride " << stride << ": worst " << worst
                << " ulp at x = " << static_cast<double>(worst_x));
    CHECK(worst <= bound);
  }
  // Each special value alone, so that the other lanes (zeros) cannot steer a whole-vector branch
  // (the piecewise erf's table halves, the exp tails) away from the path that value needs.
  double worst_alone = 0;
  T worst_alone_x = 0;
  for (const T x : special_values<T>()) {
    const double err =
        ulp_error<T>(run_at<T>(*c.stub, level, {x}, 1)[0], c.ref(static_cast<long double>(x)));
    if (err > worst_alone) {
      worst_alone = err;
      worst_alone_x = x;
    }
  }
  INFO(c.name << " " << (sizeof(T) == 4 ? "float32" : "float64") << " at "
              << cpu_capability_name(level) << ", one value at a time: worst " << worst_alone
              << " ulp at x = " << static_cast<double>(worst_alone_x));
  CHECK(worst_alone <= bound);
}

}  // namespace

TEST_CASE("vectorised unary kernels are within their ulp bounds at every CPU level",
          "[vec_math_levels]") {
  for (int l = 0; l <= static_cast<int>(max_cpu_capability()); ++l) {
    const auto level = static_cast<CpuCapability>(l);
    for (const Case& c : cases()) {
      check_case<float>(c, level);
      check_case<double>(c, level);
    }
  }
}

// ---- The activations built on the vector math (gelu in both forms, silu, mish, softplus,
// logsigmoid): each level's activation kernel against long double references.

template <typename T>
std::vector<T> run_activation_at(Activation act, CpuCapability level, const std::vector<T>& input,
                                 const ActivationArgs& args) {
  const int64_t n = static_cast<int64_t>(input.size());
  Tensor x = empty({n}, dtype_of<T>());
  std::memcpy(x.data_ptr(), input.data(), sizeof(T) * n);
  auto iter = build_elementwise("vec_math_levels", ResultKind::PromoteToFloat, Tensor(), {x});
  auto kernel = activation_stub.cpu_kernel_at(level);
  REQUIRE(kernel != nullptr);
  kernel(iter, act, args);
  Tensor out = finish_elementwise(iter, Tensor());
  std::vector<T> result(n);
  std::memcpy(result.data(), out.data_ptr(), sizeof(T) * n);
  return result;
}

long double ref_gelu(long double x) {
  return x * 0.5L * std::erfc(-x / std::sqrt(2.0L));
}
long double ref_gelu_tanh(long double x) {  // 0.5 x (1 + tanh(u)) = x sigmoid(2 u), no cancellation
  const long double inner = std::sqrt(2.0L / 3.14159265358979323846L) * (x + 0.044715L * x * x * x);
  return x / (1.0L + std::exp(-2.0L * inner));
}
long double ref_softplus1(long double x) {  // log(1 + e^x) without overflow
  return (x > 0 ? x : 0.0L) + std::log1p(std::exp(-std::fabs(x)));
}
long double ref_silu(long double x) {
  return x / (1.0L + std::exp(-x));
}
long double ref_mish(long double x) {
  return x * std::tanh(ref_softplus1(x));
}
long double ref_logsigmoid(long double x) {
  return -ref_softplus1(-x);
}

struct ActivationCase {
  const char* name;
  Activation act;
  ActivationArgs args;
  Ref ref;
  double lo, hi;
  double float_ulp, double_ulp;
  // Extra ulp allowed at x for the function's own conditioning (see the test's comment).
  double (*slack)(double x) = [](double) { return 0.0; };
};

TEST_CASE("vectorised activations are within their ulp bounds at every CPU level",
          "[vec_math_levels]") {
  // Bounds: the worst measured over every level plus a margin. gelu (erf form) evaluates erfc at
  // a rounded argument (|x| / sqrt 2, or 4 |x| / sqrt 2 - 1/2 for the tables), and erfc turns a
  // relative change e of its argument z into 2 z^2 e = x^2 e of its value: so gelu's bound grows
  // with x^2 (1.5 ulp per unit; 265 ulp in double at x = -14, where the result is 1e-43). PyTorch's
  // gelu, from 1 + erf, has an absolute error of an ulp of 1 there, and returns 0. Likewise gelu's
  // tanh form, x sigmoid(2 u) with u = 0.8 (x + 0.045 x^3): sigmoid(2u) = e^(2u) for u << 0 turns
  // the few ulp of u's own rounding into 2 |u| times as many (4 ulp of it allowed: 8 |u|).
  ActivationArgs softplus_args;
  softplus_args.a = 1;
  softplus_args.b = 20;
  const std::vector<ActivationCase> cases = {
      {"gelu", Activation::Gelu, {}, ref_gelu, -14, 8, 6, 12, [](double x) { return 1.5 * x * x; }},
      {"gelu_tanh",
       Activation::GeluTanh,
       {},
       ref_gelu_tanh,
       -10,
       8,
       6,
       6,
       [](double x) { return 6.4 * std::fabs(x + 0.044715 * x * x * x); }},
      {"silu", Activation::Silu, {}, ref_silu, -80, 40, 3.5, 3.5},
      {"mish", Activation::Mish, {}, ref_mish, -80, 40, 6, 3},
      {"softplus", Activation::Softplus, softplus_args, ref_softplus1, -80, 19, 4, 2},
      {"logsigmoid", Activation::LogSigmoid, {}, ref_logsigmoid, -80, 80, 4, 2},
  };
  for (int l = 0; l <= static_cast<int>(max_cpu_capability()); ++l) {
    const auto level = static_cast<CpuCapability>(l);
    for (const ActivationCase& c : cases) {
      std::mt19937_64 rng(99);
      std::uniform_real_distribution<double> uniform(c.lo, c.hi);
      std::vector<double> xs = {0.0, -0.0, 1e-30, -1e-30, 0.5, -0.5, 3.0, -3.0};
      for (int i = 0; i < 50000; ++i) xs.push_back(uniform(rng));
      for (int i = 0; i < 2000; ++i) xs.push_back(uniform(rng) * 1e-4);
      const std::vector<float> xf(xs.begin(), xs.end());
      const std::vector<float> got_f = run_activation_at<float>(c.act, level, xf, c.args);
      const std::vector<double> got_d = run_activation_at<double>(c.act, level, xs, c.args);
      double worst_f = 0, worst_d = 0, at_f = 0, at_d = 0;
      for (size_t i = 0; i < xs.size(); ++i) {
        const double ef =
            ulp_error<float>(got_f[i], c.ref(static_cast<long double>(xf[i]))) - c.slack(xf[i]);
        const double ed =
            ulp_error<double>(got_d[i], c.ref(static_cast<long double>(xs[i]))) - c.slack(xs[i]);
        if (ef > worst_f) worst_f = ef, at_f = xf[i];
        if (ed > worst_d) worst_d = ed, at_d = xs[i];
      }
      INFO(c.name << " at " << cpu_capability_name(level) << ": float32 worst " << worst_f
                  << " ulp at " << at_f << ", float64 worst " << worst_d << " ulp at " << at_d);
      CHECK(worst_f <= c.float_ulp);
      CHECK(worst_d <= c.double_ulp);
    }
  }
}

TEST_CASE("erfinv inverts erf at every CPU level", "[vec_math_levels]") {
  for (int l = 0; l <= static_cast<int>(max_cpu_capability()); ++l) {
    const auto level = static_cast<CpuCapability>(l);
    std::vector<double> xs = {0.0, -0.0, 1.0, -1.0, 1.5, -2.0, 0.5, -0.999999, 0.9999999999};
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> uniform(-1, 1);
    for (int i = 0; i < 20000; ++i) xs.push_back(uniform(rng));
    xs.push_back(std::numeric_limits<double>::quiet_NaN());
    const std::vector<double> got = run_at<double>(erfinv_stub, level, xs, 1);
    std::vector<float> xf(xs.begin(), xs.end());
    const std::vector<float> got_f = run_at<float>(erfinv_stub, level, xf, 1);
    for (size_t i = 0; i < xs.size(); ++i) {
      const double x = xs[i];
      INFO("erfinv(" << x << ") at " << cpu_capability_name(level) << ": " << got[i] << " / "
                     << got_f[i]);
      if (std::isnan(x) || std::fabs(x) > 1) {
        CHECK(std::isnan(got[i]));
      } else if (std::fabs(x) == 1) {
        CHECK(got[i] == std::copysign(std::numeric_limits<double>::infinity(), x));
      } else {
        // erf of the result gives x back to within a few ulp of x (the Newton step uses an erf
        // accurate to 1 ulp, which near |x| = 1 is all the information there is about y) plus
        // a few ulp of y carried through erf's slope.
        const long double back = std::erf(static_cast<long double>(got[i]));
        const long double slope = 1.1283791670955126L * std::exp(-(long double)got[i] * got[i]);
        constexpr long double eps = std::numeric_limits<double>::epsilon();
        CHECK(std::fabs(back - x) <=
              1e-300L + 4 * eps * std::fabs(x) + 4 * eps * std::fabs(got[i]) * slope);
      }
      const float f = xf[i];  // x rounded to float: 1 - 1e-10 becomes 1
      if (std::isnan(f) || std::fabs(f) > 1) {
        CHECK(std::isnan(got_f[i]));
      } else if (std::fabs(f) == 1) {
        CHECK(got_f[i] == std::copysign(std::numeric_limits<float>::infinity(), f));
      } else {
        const long double back_f = std::erf(static_cast<long double>(got_f[i]));
        const long double slope_f =
            1.1283791670955126L * std::exp(-(long double)got_f[i] * got_f[i]);
        constexpr long double eps_f = std::numeric_limits<float>::epsilon();
        CHECK(std::fabs(back_f - f) <=
              1e-40L + 4 * eps_f * std::fabs(f) + 4 * eps_f * std::fabs(got_f[i]) * slope_f);
      }
    }
  }
}

TEST_CASE("the CPU capability in use is a known level no higher than the CPU's",
          "[cpu_capability]") {
  const int level = static_cast<int>(cpu_capability());
  CHECK(level >= 0);
  CHECK(level <= static_cast<int>(max_cpu_capability()));
  const std::string names = cpu_capability_names();
  CHECK(names == "default, avx2, avx512, avx512_vnni_bf16");
  // Every stub resolves at every level: the baseline registers every kernel.
  for (int l = 0; l < kNumCpuCapabilities; ++l) {
    CHECK(exp_stub.cpu_kernel_at(static_cast<CpuCapability>(l)) != nullptr);
  }
  CHECK(exp_stub.cpu_kernel_at(CpuCapability::Default) != nullptr);
}
