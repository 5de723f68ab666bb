// The FFT plans (kernels/cpu/fft_plan.h, baseline level) against a direct O(n^2) DFT in long
// double: lengths covering every pass shape (vector lanes along q and along p, scalar
// remainders), the odd radices, Bluestein, both directions, float and double, and the real plans
// through the public ops.
#include <catch2/catch.hpp>
#include <cmath>
#include <complex>
#include <random>
#include <vector>

#include "api/creation.h"
#include "api/fft.h"
#include "kernels/cpu/fft_plan.h"

using namespace ember;
namespace plans = ember::native::fft;

namespace {

// The plan's transform of a random input against a direct DFT in long double at the output bins
// `ks`, relative to the largest of them (the rounded input is the reference's input).
template <typename T>
double max_error_at(const plans::ComplexPlan<T>* plan, bool forward,
                    const std::vector<int64_t>& ks) {
  const int64_t n = plan->size();
  std::mt19937 gen(static_cast<unsigned>(n));
  std::normal_distribution<double> dist;
  std::vector<std::complex<long double>> x(n);
  std::vector<T> buf(2 * n + plan->work_size());
  for (int64_t j = 0; j < n; ++j) {
    buf[j] = static_cast<T>(dist(gen));
    buf[n + j] = static_cast<T>(dist(gen));
    x[j] = {buf[j], buf[n + j]};
  }
  const T* y = forward ? plan->template execute<true>(buf.data(), buf.data() + 2 * n)
                       : plan->template execute<false>(buf.data(), buf.data() + 2 * n);
  const long double sign = forward ? -1 : 1;
  double err = 0, scale = 1;
  for (int64_t k : ks) {
    std::complex<long double> s = 0;
    for (int64_t j = 0; j < n; ++j) {
      const long double a = 2 * 3.14159265358979323846264338327950288L * ((j * k) % n) / n;
      s += x[j] * std::complex<long double>(std::cos(a), sign * std::sin(a));
    }
    scale = std::max(scale, static_cast<double>(std::abs(s)));
    err =
        std::max(err, static_cast<double>(std::abs(s - std::complex<long double>(y[k], y[n + k]))));
  }
  return err / scale;
}

// Every bin of the cached plan of length n.
template <typename T>
double max_error_vs_dft(int64_t n, bool forward) {
  std::vector<int64_t> ks(n);
  for (int64_t k = 0; k < n; ++k) ks[k] = k;
  return max_error_at(plans::complex_plan<T>(n).get(), forward, ks);
}

// For lengths too long for an O(n^2) reference: the first and last bins and `bins` - 2 at random.
template <typename T>
double max_error_at_bins(const plans::ComplexPlan<T>* plan, bool forward, int bins) {
  const int64_t n = plan->size();
  std::mt19937 gen(static_cast<unsigned>(n) + 7);
  std::uniform_int_distribution<int64_t> pick(0, n - 1);
  std::vector<int64_t> ks = {0, n - 1};
  while (static_cast<int>(ks.size()) < bins) ks.push_back(pick(gen));
  return max_error_at(plan, forward, ks);
}

}  // namespace

TEST_CASE("fft plans match a direct DFT", "[fft]") {
  const int64_t lengths[] = {1,   2,   3,   4,   5,    6,    7,    8,        9,    11,
                             12,  13,  16,  17,  25,   31,   32,   37,       48,   49,
                             60,  64,  97,  100, 121,  128,  210,  243,      256,  343,
                             512, 560, 768, 961, 1000, 1021, 1024, 2048 + 2, 4096, 3 * 256};
  for (int64_t n : lengths) {
    for (bool forward : {true, false}) {
      INFO("n = " << n << ", forward = " << forward);
      CHECK(max_error_vs_dft<double>(n, forward) < 1e-13);
      CHECK(max_error_vs_dft<float>(n, forward) < 2e-6);
    }
  }
}

TEST_CASE("four-step fft plans match a direct DFT at sampled bins", "[fft]") {
  // Forced four steps: 4096 splits 64 x 64, 2^15 128 x 256, 3 * 2^14 192 x 256, 5^7 125 x 625,
  // 7^6 343 x 343, 2 * 3^3 * 7 * 11 * 13 (54054) 231 x 234 (odd radices on both sides).
  for (int64_t n : {int64_t{4096}, int64_t{1} << 15, int64_t{3} << 14, int64_t{78125},
                    int64_t{117649}, int64_t{54054}}) {
    const plans::ComplexPlan<double> pd(n, plans::PlanShape::kFourStep);
    const plans::ComplexPlan<float> pf(n, plans::PlanShape::kFourStep);
    REQUIRE(pd.four_step());
    REQUIRE(pf.four_step());
    for (bool forward : {true, false}) {
      INFO("n = " << n << ", forward = " << forward);
      CHECK(max_error_at_bins(&pd, forward, 12) < 1e-13);
      CHECK(max_error_at_bins(&pf, forward, 12) < 2e-6);
    }
  }
  // Chosen by length: 2^20 (1024 x 1024) runs in four steps, 2^19 as passes.
  const auto big = plans::complex_plan<float>(int64_t{1} << 20);
  CHECK(big->four_step());
  CHECK_FALSE(plans::complex_plan<float>(int64_t{1} << 19)->four_step());
  CHECK(max_error_at_bins(big.get(), true, 4) < 2e-6);
  // A length that does not split into two sides of at least 64 keeps its passes.
  CHECK_FALSE(plans::ComplexPlan<float>(2 * 3 * 5 * 7, plans::PlanShape::kFourStep).four_step());
}

TEST_CASE("fft plans are cached and shared", "[fft]") {
  const auto a = plans::complex_plan<float>(1000);
  const auto b = plans::complex_plan<float>(1000);
  CHECK(a.get() == b.get());
  CHECK(plans::real_plan<double>(64)->complex->size() == 32);
  CHECK(plans::real_plan<double>(63)->complex->size() == 63);
}

TEST_CASE("real transforms round-trip through the public ops", "[fft]") {
  for (int64_t n : {1, 2, 5, 8, 15, 64, 101}) {
    Tensor x = empty({3, n}, TensorOptions(ScalarType::Float64));
    double* p = x.data<double>();
    for (int64_t i = 0; i < 3 * n; ++i) p[i] = std::sin(0.7 * i) + 0.1 * i;
    const Tensor spec = ember::fft::rfft(x, std::nullopt, -1, std::nullopt);
    CHECK(spec.size(1) == n / 2 + 1);
    const Tensor back = ember::fft::irfft(spec, n, -1, std::nullopt);
    const double* q = back.data<double>();
    double err = 0;
    for (int64_t i = 0; i < 3 * n; ++i) err = std::max(err, std::abs(q[i] - p[i]));
    INFO("n = " << n);
    CHECK(err < 1e-12);
  }
}

TEST_CASE("fft transform reads and writes either layout, in place too", "[fft]") {
  // transform() against execute(): split or interleaved input and output (its first and last
  // passes read / write the interleaved layout directly where their shapes allow), scaled.
  for (int64_t n : {1, 2, 3, 8, 16, 24, 32, 48, 64, 128, 160, 256, 560, 1021, 4096, 49152}) {
    // 49152 in four steps (192 x 256).
    const auto plan = n == 49152 ? std::make_shared<const plans::ComplexPlan<double>>(
                                       n, plans::PlanShape::kFourStep)
                                 : plans::complex_plan<double>(n);
    std::mt19937 gen(static_cast<unsigned>(n));
    std::normal_distribution<double> dist;
    std::vector<double> x(2 * n), buf(2 * n + plan->work_size()), work(plan->io_work_size());
    for (double& v : x) v = dist(gen);  // interleaved
    for (int64_t j = 0; j < n; ++j) {
      buf[j] = x[2 * j];
      buf[n + j] = x[2 * j + 1];
    }
    const double* ref = plan->execute<true>(buf.data(), buf.data() + 2 * n);
    for (int mode = 0; mode < 5; ++mode) {
      const bool in_cx = mode & 1, out_cx = (mode & 2) || mode == 4, in_place = mode == 4;
      std::vector<double> src(2 * n), dst(2 * n);
      for (int64_t j = 0; j < n; ++j) {
        src[in_cx ? 2 * j : j] = x[2 * j];
        src[in_cx ? 2 * j + 1 : n + j] = x[2 * j + 1];
      }
      const double scale = out_cx ? 0.25 : 1.0;
      double* out = in_place ? src.data() : dst.data();
      plan->transform<true>(src.data(), in_cx, out, out_cx, scale, work.data());
      double err = 0;
      for (int64_t k = 0; k < n; ++k) {
        const double re = out_cx ? out[2 * k] : out[k], im = out_cx ? out[2 * k + 1] : out[n + k];
        err = std::max(err, std::abs(re - scale * ref[k]) + std::abs(im - scale * ref[n + k]));
      }
      INFO("n = " << n << ", mode = " << mode);
      CHECK(err < 1e-12 * std::max<double>(1, n));
    }
  }
}
