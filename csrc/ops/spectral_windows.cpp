// The window functions (ops/spectral_windows.h).
#include "ops/spectral_windows.h"

#include <cmath>
#include <vector>

#include "core/factory.h"
#include "ops/shape_util.h"
#include "ops/views.h"

namespace ember {
namespace native {
namespace {

constexpr double kPi = 3.141592653589793238462643383279502884;

// The modified Bessel function I0 by its power series sum ((x/2)^k / k!)^2, whose terms are
// positive, so it converges without cancellation; kaiser's arguments are moderate (|x| <= beta).
double bessel_i0(double x) {
  const double q = x * x / 4;
  double term = 1, sum = 1;
  for (int k = 1; k < 500; ++k) {
    term *= q / (static_cast<double>(k) * k);
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return sum;
}

}  // namespace

Tensor spectral_window(WindowKind kind, int64_t length, bool periodic, double alpha, double beta,
                       ScalarType dtype, const char* op) {
  if (dtype == ScalarType::Undefined) dtype = default_dtype();
  EMBER_CHECK(is_floating(dtype), "[", op, "] ", op, " expects floating point dtypes, got ",
              torch_type_name(dtype));
  EMBER_CHECK(length >= 0, "[", op, "] ", op,
              " requires non-negative window_length, got window_length=", length);
  Tensor w = empty_tensor({length}, ScalarType::Float64, Device(), op);
  double* p = w.data<double>();
  if (length == 1) p[0] = 1.0;
  if (length > 1) {
    // The symmetric window of m points; periodic keeps the first `length` of m = length + 1.
    const int64_t m = periodic ? length + 1 : length;
    const double denom = static_cast<double>(m - 1);
    const double i0_beta = kind == WindowKind::kKaiser ? bessel_i0(beta) : 1.0;
    for (int64_t i = 0; i < length; ++i) {
      const double t = static_cast<double>(i) / denom;  // in [0, 1]
      switch (kind) {
        case WindowKind::kHann:
          p[i] = 0.5 - 0.5 * std::cos(2 * kPi * t);
          break;
        case WindowKind::kHamming:
          p[i] = alpha - beta * std::cos(2 * kPi * t);
          break;
        case WindowKind::kBlackman:
          p[i] = 0.42 - 0.5 * std::cos(2 * kPi * t) + 0.08 * std::cos(4 * kPi * t);
          break;
        case WindowKind::kBartlett:
          p[i] = 1.0 - std::abs(2.0 * t - 1.0);
          break;
        case WindowKind::kKaiser: {
          const double r = 2.0 * t - 1.0;
          p[i] = bessel_i0(beta * std::sqrt(std::max(0.0, 1.0 - r * r))) / i0_beta;
          break;
        }
      }
    }
  }
  return dtype == ScalarType::Float64 ? w : to_dtype(w, dtype);
}

}  // namespace native
}  // namespace ember
