// The vectorisable elementary functions of kernels/cpu/vec_math.h against their scalar reference
// twins (vmath::ref, i.e. libm): maximum ulp error over millions of values (random in the
// interesting range plus a sweep over all bit patterns) and exact special values.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/vec_math.h"

using namespace ember;
using namespace ember::native;  // the kernels and stubs under test

namespace {

constexpr float kInfF = std::numeric_limits<float>::infinity();
constexpr double kInfD = std::numeric_limits<double>::infinity();

// Error of `got` in units of the last place of the exactly rounded float result, measured
// against a double reference. Subnormal results count in units of the smallest subnormal.
double ulp_error(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : 1e30;
  if (std::isinf(want) || std::isinf(got)) return got == static_cast<float>(want) ? 0 : 1e30;
  if (std::fabs(want) < std::numeric_limits<float>::min()) {
    return std::fabs(got - want) / std::numeric_limits<float>::denorm_min();
  }
  int e;
  std::frexp(want, &e);
  return std::fabs(got - want) / std::ldexp(1.0, e - 24);
}

double ulp_error(double got, long double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : 1e30;
  if (std::isinf(want) || std::isinf(got)) return got == static_cast<double>(want) ? 0 : 1e30;
  if (std::fabs(want) < std::numeric_limits<double>::min()) {
    return static_cast<double>(std::fabs(got - want) / std::numeric_limits<double>::denorm_min());
  }
  int e;
  std::frexp(want, &e);
  return static_cast<double>(std::fabs(got - want) / std::ldexp(1.0L, e - 53));
}

// Inputs: uniform in [lo, hi], a sweep over all float bit patterns (step 4099: ~1M values) and
// the given special values.
std::vector<float> float_inputs(float lo, float hi, std::initializer_list<float> specials) {
  std::vector<float> xs(specials);
  std::mt19937 gen(42);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int i = 0; i < 2000000; ++i) xs.push_back(dist(gen));
  for (uint64_t u = 0; u <= 0xffffffffull; u += 4099) {
    uint32_t b = static_cast<uint32_t>(u);
    float v;
    std::memcpy(&v, &b, sizeof v);
    xs.push_back(v);
  }
  return xs;
}

std::vector<double> double_inputs(double lo, double hi, std::initializer_list<double> specials) {
  std::vector<double> xs(specials);
  std::mt19937_64 gen(42);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int i = 0; i < 1000000; ++i) xs.push_back(dist(gen));
  for (uint64_t u = 0; u < 0xffffffffffffffffull - 20000000000000ull; u += 20000000000000ull) {
    double v;
    std::memcpy(&v, &u, sizeof v);
    xs.push_back(v);
  }
  return xs;
}

// Max ulp error of f against ref (computed one precision up) over xs.
template <typename F, typename Ref>
double max_ulp_float(const std::vector<float>& xs, F f, Ref ref, float* worst = nullptr) {
  double mx = 0;
  for (float x : xs) {
    double e = ulp_error(f(x), ref(static_cast<double>(x)));
    if (e > mx) {
      mx = e;
      if (worst) *worst = x;
    }
  }
  return mx;
}

template <typename F, typename Ref>
double max_ulp_double(const std::vector<double>& xs, F f, Ref ref, double* worst = nullptr) {
  double mx = 0;
  for (double x : xs) {
    double e = ulp_error(f(x), ref(static_cast<long double>(x)));
    if (e > mx) {
      mx = e;
      if (worst) *worst = x;
    }
  }
  return mx;
}

// The twins of vmath::ref evaluated one precision up (double for float, long double for double).
#define EMBER_CHECK_ULP(fn, lo, hi, max_ulp, ...)                           \
  do {                                                                      \
    float wf = 0;                                                           \
    double wd = 0;                                                          \
    auto xf = float_inputs(lo, hi, {__VA_ARGS__});                          \
    double ef = max_ulp_float(                                              \
        xf, [](float x) { return vmath::fn(x); },                           \
        [](double x) { return vmath::ref::fn<double>(x); }, &wf);           \
    INFO(#fn " float32 worst input " << wf);                                \
    CHECK(ef <= max_ulp);                                                   \
    auto xd = double_inputs(lo, hi, {__VA_ARGS__});                         \
    double ed = max_ulp_double(                                             \
        xd, [](double x) { return vmath::fn(x); },                          \
        [](long double x) { return vmath::ref::fn<long double>(x); }, &wd); \
    INFO(#fn " float64 worst input " << wd);                                \
    CHECK(ed <= max_ulp);                                                   \
  } while (0)

}  // namespace

TEST_CASE("vmath::exp matches std::exp within 2 ulp", "[vec_math]") {
  EMBER_CHECK_ULP(exp, -110.0f, 90.0f, 2.0, 0.0f, -0.0f, kInfF, -kInfF, NAN, 88.72283f, 88.7229f,
                  -87.33f, -103.97f, -104.0f, -745.2f, 709.78f, 1e-30f, -1e-30f);
  CHECK(vmath::exp(0.0f) == 1.0f);
  CHECK(vmath::exp(0.0) == 1.0);
  CHECK(vmath::exp(-kInfF) == 0.0f);
  CHECK(vmath::exp(kInfD) == kInfD);
  CHECK(vmath::exp(89.0f) == kInfF);
  CHECK(vmath::exp(-104.0f) == 0.0f);
  CHECK(std::isnan(vmath::exp(std::nanf(""))));
  CHECK(std::isnan(vmath::exp(std::nan(""))));
  // Subnormal results are produced (not flushed to zero).
  CHECK(vmath::exp(-100.0f) > 0.0f);
  CHECK(vmath::exp(-740.0) > 0.0);
}

TEST_CASE("vmath::exp2 matches std::exp2 within 2 ulp", "[vec_math]") {
  EMBER_CHECK_ULP(exp2, -155.0f, 130.0f, 2.0, 0.0f, 1.0f, 10.0f, -149.0f, -150.0f, 128.0f, 127.99f,
                  -1074.0f, 1023.99f, 1024.0f, kInfF, -kInfF, NAN);
  CHECK(vmath::exp2(10.0f) == 1024.0f);
  CHECK(vmath::exp2(-3.0) == 0.125);
  CHECK(vmath::exp2(128.0f) == kInfF);
}

TEST_CASE("vmath::expm1 matches std::expm1 within 2 ulp", "[vec_math]") {
  EMBER_CHECK_ULP(expm1, -3.0f, 3.0f, 2.0, 0.0f, -0.0f, 1e-10f, -1e-10f, 1e-30f, 20.0f, 20.5f,
                  40.5f, 88.5f, -20.5f, -50.0f, kInfF, -kInfF, NAN);
  CHECK(vmath::expm1(-kInfF) == -1.0f);
  CHECK(vmath::expm1(kInfD) == kInfD);
  CHECK(vmath::expm1(1e-30f) == 1e-30f);
  CHECK(std::signbit(vmath::expm1(-0.0f)));
}

TEST_CASE("vmath::log matches std::log within 2 ulp", "[vec_math]") {
  EMBER_CHECK_ULP(log, 0.0f, 10.0f, 2.0, 0.0f, -0.0f, 1.0f, -1.0f, 1e-45f, 1e-40f, 1e-40f, 3.4e38f,
                  kInfF, -kInfF, NAN, 0.70710677f, 1.4142135f);
  CHECK(vmath::log(1.0f) == 0.0f);
  CHECK(vmath::log(1.0) == 0.0);
  CHECK(vmath::log(0.0f) == -kInfF);
  CHECK(vmath::log(-0.0) == -kInfD);
  CHECK(std::isnan(vmath::log(-1.0f)));
  CHECK(vmath::log(kInfF) == kInfF);
}

TEST_CASE("vmath::log2 and log10 match libm within 2 ulp", "[vec_math]") {
  EMBER_CHECK_ULP(log2, 0.0f, 10.0f, 2.0, 0.0f, 1.0f, 8.0f, 1e-45f, 1e-40f, kInfF, NAN, -2.0f);
  EMBER_CHECK_ULP(log10, 0.0f, 10.0f, 2.0, 0.0f, 1.0f, 10.0f, 1000.0f, 1e-45f, kInfF, NAN, -2.0f);
  // Exact powers of two give exact integers.
  for (int k = -149; k < 128; ++k) CHECK(vmath::log2(std::ldexp(1.0f, k)) == float(k));
  for (int k = -1074; k < 1024; ++k) CHECK(vmath::log2(std::ldexp(1.0, k)) == double(k));
}

TEST_CASE("vmath::log1p matches std::log1p within 2 ulp", "[vec_math]") {
  EMBER_CHECK_ULP(log1p, -1.0f, 3.0f, 2.0, 0.0f, -0.0f, -1.0f, -0.99999994f, 1e-10f, -1e-10f,
                  1e-30f, -2.0f, 3.4e38f, kInfF, -kInfF, NAN);
  CHECK(vmath::log1p(-1.0f) == -kInfF);
  CHECK(vmath::log1p(kInfD) == kInfD);
  CHECK(std::isnan(vmath::log1p(-2.0)));
  CHECK(vmath::log1p(1e-30f) == 1e-30f);
  CHECK(std::signbit(vmath::log1p(-0.0)));
}

TEST_CASE("vmath::tanh matches std::tanh within 2 ulp", "[vec_math]") {
  EMBER_CHECK_ULP(tanh, -10.0f, 10.0f, 2.0, 0.0f, -0.0f, 0.625f, -0.625f, 0.62499994f, 1e-30f,
                  20.0f, -50.0f, kInfF, -kInfF, NAN);
  CHECK(vmath::tanh(kInfF) == 1.0f);
  CHECK(vmath::tanh(-kInfD) == -1.0);
  CHECK(std::signbit(vmath::tanh(-0.0f)));
  CHECK(vmath::tanh(1e-30f) == 1e-30f);
}

TEST_CASE("vmath::sigmoid matches 1 / (1 + exp(-x)) within 3 ulp", "[vec_math]") {
  // Division after exp: one more rounding than the others.
  EMBER_CHECK_ULP(sigmoid, -40.0f, 40.0f, 3.0, 0.0f, -88.7f, -100.0f, -745.0f, 50.0f, kInfF, -kInfF,
                  NAN);
  CHECK(vmath::sigmoid(0.0f) == 0.5f);
  CHECK(vmath::sigmoid(kInfF) == 1.0f);
  CHECK(vmath::sigmoid(-kInfD) == 0.0);
  CHECK(vmath::sigmoid(-90.0f) > 0.0f);  // tiny results keep their accuracy
}

TEST_CASE("vmath::sin_fast / cos_fast match libm within 1 ulp in their range", "[vec_math]") {
  std::vector<float> xs{0.0f, -0.0f, 1e-30f, 1.5707964f, 3.1415927f, 1e5f, -1e5f, 6.2831855f};
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> wide(-vmath::kTrigFastLimit, vmath::kTrigFastLimit);
  std::uniform_real_distribution<float> narrow(-10.0f, 10.0f);
  for (int i = 0; i < 2000000; ++i) xs.push_back(i % 2 ? wide(gen) : narrow(gen));
  // Every float near multiples of pi/2 up to 100 (where reduction errors would show).
  for (int k = 1; k < 64; ++k) {
    float c = static_cast<float>(k * 1.5707963267948966);
    for (int j = 0; j < 2000; ++j) {
      xs.push_back(c);
      c = std::nextafter(c, kInfF);
    }
  }
  float worst = 0;
  double es = max_ulp_float(
      xs, [](float x) { return vmath::sin_fast(x); },
      [](double x) { return vmath::ref::sin<double>(x); }, &worst);
  INFO("sin worst input " << worst);
  CHECK(es <= 1.0);
  double ec = max_ulp_float(
      xs, [](float x) { return vmath::cos_fast(x); },
      [](double x) { return vmath::ref::cos<double>(x); }, &worst);
  INFO("cos worst input " << worst);
  CHECK(ec <= 1.0);
  CHECK(std::signbit(vmath::sin_fast(-0.0f)));
  CHECK(vmath::cos_fast(0.0f) == 1.0f);
}
