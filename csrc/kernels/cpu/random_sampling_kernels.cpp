// CPU kernels of the rejection samplers (gamma: Marsaglia-Tsang; Poisson: multiplication /
// Hormann's PTRS; binomial: inversion / Hormann's BTRS; Dirichlet: normalised gammas) and of the
// gamma reparameterisation gradient. All arithmetic is in float64; see
// docs/design/distributions.md for the algorithms and their accuracy.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/random_utils.h"
#include "kernels/random_sampling_stubs.h"

namespace ember {
namespace native {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The random words of one element (Note [Per-element Philox streams]).
class ElementStream {
 public:
  ElementStream(const PhiloxState& st, int64_t i)
      : counter_(st.offset + static_cast<uint64_t>(i)),
        k0_(static_cast<uint32_t>(st.seed)),
        k1_(static_cast<uint32_t>(st.seed >> 32)) {}

  uint32_t next() {
    if (pos_ == 4) {
      buf_ = philox4x32_10(
          {static_cast<uint32_t>(counter_), static_cast<uint32_t>(counter_ >> 32), draw_++, 0u},
          k0_, k1_);
      pos_ = 0;
    }
    return buf_[pos_++];
  }
  // Uniform in [0, 1), 53 bits.
  double uniform() {
    const uint32_t lo = next();
    return uniform_double(lo, next());
  }
  // Uniform in (0, 1]: safe under log and as a base of pow.
  double uniform_pos() { return 1.0 - uniform(); }
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u0 = uniform();
    double z[2];
    box_muller(u0, uniform(), z);
    spare_ = z[1];
    has_spare_ = true;
    return z[0];
  }

 private:
  uint64_t counter_;
  uint32_t k0_, k1_;
  uint32_t draw_ = 0;
  PhiloxBlock buf_{};
  int pos_ = 4;
  bool has_spare_ = false;
  double spare_ = 0.0;
};

// Marsaglia & Tsang (2000), "A simple method for generating gamma variables"; alpha < 1 samples
// Gamma(alpha + 1) and scales by U^(1/alpha).
double sample_gamma(double alpha, ElementStream& s) {
  if (!(alpha >= 0.0)) return kNaN;  // negative or NaN
  if (alpha == 0.0) return 0.0;      // degenerate at 0 (clamped by the caller, as PyTorch)
  if (std::isinf(alpha)) return alpha;
  double scale = 1.0;
  if (alpha < 1.0) {
    scale = std::exp(std::log(s.uniform_pos()) / alpha);
    alpha += 1.0;
  }
  const double d = alpha - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double z, v;
    do {
      z = s.normal();
      v = 1.0 + c * z;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = s.uniform_pos();
    const double z2 = z * z;
    if (u < 1.0 - 0.0331 * z2 * z2) return d * v * scale;  // the cheap squeeze
    if (std::log(u) < 0.5 * z2 + d * (1.0 - v + std::log(v))) return d * v * scale;
  }
}

// psi(x) for x > 0: the recurrence up to x >= 6, then the asymptotic series.
double digamma_pos(double x) {
  double r = 0.0;
  while (x < 6.0) {
    r -= 1.0 / x;
    x += 1.0;
  }
  const double f = 1.0 / (x * x);
  return r + std::log(x) - 0.5 / x -
         f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f * (1.0 / 132)))));
}

// The continued fraction h(a, x) with Q(a, x) = x^a e^-x / Gamma(a) * h (modified Lentz);
// converges quickly for x > a + 1.
double upper_gamma_cf(double a, double x) {
  constexpr double kTiny = 1e-300;
  double b = x + 1.0 - a;
  double c = 1.0 / kTiny;
  double d = 1.0 / b;
  double h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1.0) < 1e-16) break;
  }
  return h;
}

// Note [Gamma reparameterisation gradient]: a sample x = F^-1(u; a) at fixed u has
// dx/da = -(dP(a, x)/da) / p(x; a), P the regularised lower incomplete gamma. Both pieces are
// computed relative to the density so nothing underflows:
// - x <= a + 1: P = sum_n e^-x x^(a+n) / Gamma(a+n+1); differentiating term by term gives
//   dx/da = -(x/a) sum_n r_n (log x - psi(a+n+1)), r_0 = 1, r_(n+1) = r_n x / (a+n+1).
// - x > a + 1: Q = 1 - P = x^a e^-x h(a, x) / Gamma(a), so
//   dx/da = x h (log x - psi(a) + d log h / da), the last term by a central difference (h is
//   smooth in a and accurate to rounding, so the difference keeps ~10 digits).
// Both need O(sqrt(a)) terms near the mode; beyond a = 1e6 the Wilson-Hilferty approximation
// (x = a (1 - 1/(9a) + z / (3 sqrt a))^3 at fixed z) is differentiated instead.
double standard_gamma_grad(double a, double x) {
  if (!(a > 0.0) || !(x >= 0.0) || std::isinf(a) || std::isinf(x)) return kNaN;
  if (x == 0.0) return 0.0;
  if (a > 1e6) {
    const double sa = std::sqrt(a);
    const double t = std::cbrt(x / a);
    const double z = (t - 1.0 + 1.0 / (9.0 * a)) * 3.0 * sa;
    const double dt = 1.0 / (9.0 * a * a) - z / (6.0 * a * sa);
    return t * t * t + 3.0 * a * t * t * dt;
  }
  const double logx = std::log(x);
  if (x <= a + 1.0) {
    double r = 1.0, psi = digamma_pos(a + 1.0), sum = 0.0;
    for (int n = 0; n < 1000000; ++n) {
      const double term = r * (logx - psi);
      sum += term;
      if (std::fabs(term) <= 1e-17 * std::fabs(sum) && x < a + n + 1.0) break;
      const double k = a + n + 1.0;
      r *= x / k;
      psi += 1.0 / k;
      if (r == 0.0) break;
    }
    return -(x / a) * sum;
  }
  const double h = upper_gamma_cf(a, x);
  const double step = 1e-5 * std::max(1.0, a);
  const double dlogh = (std::log(upper_gamma_cf(a + step, x)) -
                        std::log(upper_gamma_cf(a - std::min(step, 0.5 * a), x))) /
                       (step + std::min(step, 0.5 * a));
  return x * h * (logx - digamma_pos(a) + dlogh);
}

// Poisson: multiplication of uniforms (Knuth) for small rates; PTRS, W. Hormann (1993), "The
// transformed rejection method for generating Poisson random variables", for rate >= 10.
double sample_poisson(double lam, ElementStream& s) {
  if (lam == 0.0) return 0.0;
  if (std::isinf(lam)) return lam;
  if (lam < 10.0) {
    const double limit = std::exp(-lam);
    double prod = s.uniform_pos();
    double k = 0.0;
    while (prod > limit) {
      prod *= s.uniform_pos();
      k += 1.0;
    }
    return k;
  }
  const double slam = std::sqrt(lam), loglam = std::log(lam);
  const double b = 0.931 + 2.53 * slam;
  const double a = -0.059 + 0.02483 * b;
  const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
  const double vr = 0.9277 - 3.6224 / (b - 2.0);
  for (;;) {
    const double u = s.uniform() - 0.5;
    const double v = s.uniform_pos();
    const double us = 0.5 - std::fabs(u);
    const double k = std::floor((2.0 * a / us + b) * u + lam + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0.0 || (us < 0.013 && v > us)) continue;
    if (std::log(v) + std::log(inv_alpha) - std::log(a / (us * us) + b) <=
        -lam + k * loglam - std::lgamma(k + 1.0))
      return k;
  }
}

// Binomial with p <= 0.5: inversion (sequential search) when n p < 10, else BTRS, W. Hormann
// (1993), "The generation of binomial random variates".
double sample_binomial_low(double n, double p, ElementStream& s) {
  const double q = 1.0 - p;
  if (n * p < 10.0) {
    const double ratio = p / q, a = (n + 1.0) * ratio;
    const double r0 = std::exp(n * std::log1p(-p));
    for (;;) {
      double u = s.uniform(), r = r0, x = 0.0;
      while (u > r && x < n) {
        u -= r;
        x += 1.0;
        r *= a / x - ratio;
      }
      if (u <= r) return x;  // else rounding left mass above n: draw again
    }
  }
  const double spq = std::sqrt(n * p * q);
  const double b = 1.15 + 2.53 * spq;
  const double a = -0.0873 + 0.0248 * b + 0.01 * p;
  const double c = n * p + 0.5;
  const double vr = 0.92 - 4.2 / b;
  const double alpha = (2.83 + 5.1 / b) * spq;
  const double lpq = std::log(p / q);
  const double m = std::floor((n + 1.0) * p);
  const double h = std::lgamma(m + 1.0) + std::lgamma(n - m + 1.0);
  for (;;) {
    const double u = s.uniform() - 0.5;
    double v = s.uniform_pos();
    const double us = 0.5 - std::fabs(u);
    const double k = std::floor((2.0 * a / us + b) * u + c);
    if (k < 0.0 || k > n) continue;
    if (us >= 0.07 && v <= vr) return k;
    v = std::log(v * alpha / (a / (us * us) + b));
    if (v <= h - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0) + (k - m) * lpq) return k;
  }
}

double sample_binomial(double n, double p, ElementStream& s) {
  n = std::floor(n);
  if (n == 0.0 || p == 0.0) return 0.0;
  if (p == 1.0) return n;
  return p <= 0.5 ? sample_binomial_low(n, p, s) : n - sample_binomial_low(n, 1.0 - p, s);
}

// Elementwise sampler: out[i] = f(in[i], stream i), computed in parallel chunks.
template <typename F>
void sample_elementwise(const Tensor& out, const Tensor& in, const PhiloxState& st, const char* op,
                        const F& f) {
  dispatch_dtype<kFloatingTypes>(out.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    const double* a = in.data<double>();
    parallel_for(0, out.numel(), 256, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        ElementStream s(st, i);
        o[i] = convert<T>(f(a[i], s));
      }
    });
  });
}

// The dtype's smallest normal number: gamma samples are clamped to it (Note in the header).
template <typename T>
double tiny_of() {
  if constexpr (std::is_same_v<T, double>) return std::numeric_limits<double>::min();
  if constexpr (std::is_same_v<T, Half>) return 6.103515625e-05;
  return static_cast<double>(std::numeric_limits<float>::min());  // float, bfloat16
}

void standard_gamma_kernel(const Tensor& out, const Tensor& alpha, PhiloxState st) {
  dispatch_dtype<kFloatingTypes>(out.dtype(), "_standard_gamma", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const double tiny = tiny_of<T>();
    sample_elementwise(out, alpha, st, "_standard_gamma", [tiny](double a, ElementStream& s) {
      const double x = sample_gamma(a, s);
      return std::isnan(x) ? x : std::max(x, tiny);
    });
  });
}

void standard_gamma_grad_kernel(const Tensor& out, const Tensor& alpha, const Tensor& x) {
  dispatch_dtype<kFloatingTypes>(out.dtype(), "_standard_gamma_grad", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    const double* a = alpha.data<double>();
    const double* xs = x.data<double>();
    parallel_for(0, out.numel(), 64, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) o[i] = convert<T>(standard_gamma_grad(a[i], xs[i]));
    });
  });
}

void sample_dirichlet_kernel(const Tensor& out, const Tensor& alpha, PhiloxState st) {
  const int64_t k = out.size(out.dim() - 1);
  const int64_t rows = k == 0 ? 0 : out.numel() / k;
  const double* a = alpha.data<double>();
  dispatch_dtype<kFloatingTypes>(out.dtype(), "_sample_dirichlet", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    const double tiny = tiny_of<T>();
    parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
      std::vector<double> g(k);
      for (int64_t r = begin; r < end; ++r) {
        double sum = 0.0;
        for (int64_t c = 0; c < k; ++c) {
          ElementStream s(st, r * k + c);
          // Clamped as _standard_gamma's samples, so a row of tiny alphas whose gammas all
          // underflow still normalises (to equal shares) instead of dividing 0 by 0.
          const double x = sample_gamma(a[r * k + c], s);
          g[c] = std::isnan(x) ? x : std::max(x, tiny);
          sum += g[c];
        }
        for (int64_t c = 0; c < k; ++c) o[r * k + c] = convert<T>(std::max(g[c] / sum, tiny));
      }
    });
  });
}

void poisson_kernel(const Tensor& out, const Tensor& rate, PhiloxState st) {
  sample_elementwise(out, rate, st, "poisson",
                     [](double lam, ElementStream& s) { return sample_poisson(lam, s); });
}

void binomial_kernel(const Tensor& out, const Tensor& count, const Tensor& prob, PhiloxState st) {
  dispatch_dtype<kFloatingTypes>(out.dtype(), "binomial", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    const double* n = count.data<double>();
    const double* p = prob.data<double>();
    parallel_for(0, out.numel(), 256, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        ElementStream s(st, i);
        o[i] = convert<T>(sample_binomial(n[i], p[i], s));
      }
    });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(standard_gamma_stub, CPU, standard_gamma_kernel);
EMBER_REGISTER_KERNEL(standard_gamma_grad_stub, CPU, standard_gamma_grad_kernel);
EMBER_REGISTER_KERNEL(sample_dirichlet_stub, CPU, sample_dirichlet_kernel);
EMBER_REGISTER_KERNEL(poisson_stub, CPU, poisson_kernel);
EMBER_REGISTER_KERNEL(binomial_stub, CPU, binomial_kernel);

}  // namespace native
}  // namespace ember
