#include "ops/random.h"

#include <cmath>
#include <limits>

#include "core/shape.h"
#include "dispatch/copy.h"
#include "dispatch/mem_overlap.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(uniform_stub, UniformFn);
EMBER_DEFINE_STUB(normal_stub, NormalFn);
EMBER_DEFINE_STUB(random_int_stub, RandomIntFn);
EMBER_DEFINE_STUB(bernoulli_stub, BernoulliFn);
EMBER_DEFINE_STUB(continuous_stub, ContinuousFn);
EMBER_DEFINE_STUB(randperm_stub, RandpermFn);
EMBER_DEFINE_STUB(multinomial_stub, MultinomialFn);

namespace {

// Bits of precision (including the implicit one) of a floating dtype: every integer in
// [-2^digits, 2^digits] is exactly representable.
int mantissa_digits(ScalarType t) {
  switch (t) {
    case ScalarType::Float16:
      return 11;
    case ScalarType::BFloat16:
      return 8;
    case ScalarType::Float32:
      return 24;
    default:
      return 53;
  }
}

double float_max(ScalarType t) {
  switch (t) {
    case ScalarType::Float16:
      return 65504.0;
    case ScalarType::BFloat16:
      return 3.3895313892515355e38;
    case ScalarType::Float32:
      return static_cast<double>(std::numeric_limits<float>::max());
    default:
      return std::numeric_limits<double>::max();
  }
}

// Inclusive integer range of an integral (or bool) dtype.
void integral_range(ScalarType t, int64_t* lo, int64_t* hi) {
  switch (t) {
    case ScalarType::Bool:
      *lo = 0, *hi = 1;
      break;
    case ScalarType::UInt8:
      *lo = 0, *hi = 255;
      break;
    case ScalarType::Int8:
      *lo = -128, *hi = 127;
      break;
    case ScalarType::Int16:
      *lo = -32768, *hi = 32767;
      break;
    case ScalarType::Int32:
      *lo = std::numeric_limits<int32_t>::min(), *hi = std::numeric_limits<int32_t>::max();
      break;
    default:
      *lo = std::numeric_limits<int64_t>::min(), *hi = std::numeric_limits<int64_t>::max();
      break;
  }
}

void check_floating(const Tensor& t, const char* op, bool allow_complex) {
  bool ok = t.is_floating_point() || (allow_complex && t.is_complex());
  EMBER_CHECK_T(NotImplementedError, ok, "[", op, "] not implemented for dtype ",
                dtype_name(t.dtype()), ": expected a floating point",
                allow_complex ? " or complex" : "", " tensor");
}

// Runs `launch(contiguous_target, state)` for an in-place sampling op after reserving the
// counters it needs. A non-contiguous self is filled through a contiguous temporary so that
// values land in logical (row-major) order whatever the layout.
template <typename Launch>
Tensor& fill_random(Tensor& self, const char* op, int64_t nvalues, int per_block, Generator* gen,
                    const Launch& launch) {
  EMBER_CHECK(!self.storage()->read_only(), "[", op,
              "] cannot write to a tensor backed by a read-only NumPy array");
  assert_no_internal_overlap(self, op);
  if (self.numel() == 0) return self;
  const uint64_t nblocks = (static_cast<uint64_t>(nvalues) + per_block - 1) / per_block;
  const PhiloxState st = generator_or_default(gen).reserve(nblocks);
  if (self.is_contiguous()) {
    launch(self, st);
    self.bump_version();
    return self;
  }
  Tensor tmp = empty_tensor(self.sizes(), self.dtype(), self.device(), op);
  launch(tmp, st);
  copy_into(self, tmp, op);
  return self;
}

int64_t real_values(const Tensor& t) {
  return t.numel() * (t.is_complex() ? 2 : 1);
}

// A tensor's values as a contiguous float64 tensor (for validation and the kernels' p input).
Tensor as_float64(const Tensor& t, const char* op) {
  return contiguous(to_dtype(t, ScalarType::Float64));
}

}  // namespace

// --- in-place distributions ---------------------------------------------------------------------

Tensor& uniform_(Tensor& self, double from, double to, Generator* gen) {
  const char* op = "uniform_";
  check_floating(self, op, /*allow_complex=*/true);
  const ScalarType real = to_real(self.dtype());
  const double m = float_max(real);
  EMBER_CHECK(std::isfinite(from) && std::fabs(from) <= m, "[", op, "] from is out of bounds for ",
              dtype_name(real));
  EMBER_CHECK(std::isfinite(to) && std::fabs(to) <= m, "[", op, "] to is out of bounds for ",
              dtype_name(real));
  EMBER_CHECK(from <= to, "[", op,
              "] uniform_ expects to return a [from, to) range, but found from=", from,
              " > to=", to);
  EMBER_CHECK(to - from <= m, "[", op, "] uniform_ expects to-from <= the largest ",
              dtype_name(real), " (", m, "), but found to=", to, " and from=", from,
              " which result in to-from to exceed the limit");
  return fill_random(
      self, op, real_values(self), uniform_values_per_block(self.dtype()), gen,
      [&](const Tensor& out, PhiloxState st) { uniform_stub(out.device(), out, from, to, st); });
}

Tensor& normal_(Tensor& self, double mean, double std, Generator* gen) {
  const char* op = "normal_";
  check_floating(self, op, /*allow_complex=*/true);
  EMBER_CHECK(std >= 0.0, "[", op, "] normal expects std >= 0.0, but found std ", std);
  // A complex normal with variance std^2 splits it evenly between the real and imaginary parts.
  const double part_std = self.is_complex() ? std / std::sqrt(2.0) : std;
  return fill_random(self, op, real_values(self), normal_values_per_block(self.dtype()), gen,
                     [&](const Tensor& out, PhiloxState st) {
                       normal_stub(out.device(), out, mean, part_std, st);
                     });
}

Tensor& random_(Tensor& self, std::optional<int64_t> from_opt, std::optional<int64_t> to_opt,
                Generator* gen) {
  const char* op = "random_";
  const ScalarType t = self.dtype();
  EMBER_CHECK_T(NotImplementedError, !is_complex(t), "[", op, "] not implemented for dtype ",
                dtype_name(t));
  // The largest value random_ may produce without an explicit `to`: every integer up to it must
  // be representable (2^digits for floats).
  __int128 dtype_lo, dtype_hi;
  if (is_floating(t)) {
    dtype_hi = __int128(1) << mantissa_digits(t);
    dtype_lo = -dtype_hi;
  } else {
    int64_t lo, hi;
    integral_range(t, &lo, &hi);
    dtype_lo = lo, dtype_hi = hi;
  }
  __int128 lo = from_opt.value_or(0);
  __int128 hi = to_opt ? __int128(*to_opt) - 1 : dtype_hi;  // inclusive
  if (to_opt) {
    EMBER_CHECK(lo <= hi, "[", op, "] random_ expects 'from' to be less than 'to', but got from=",
                from_opt.value_or(0), " >= to=", *to_opt);
  }
  if (is_floating(t)) {
    const double m = float_max(t);
    EMBER_CHECK(std::fabs(double(lo)) <= m, "[", op, "] from is out of bounds for ", dtype_name(t));
    EMBER_CHECK(std::fabs(double(hi)) <= m, "[", op, "] to - 1 is out of bounds for ",
                dtype_name(t));
  } else {
    EMBER_CHECK(lo >= dtype_lo && lo <= dtype_hi, "[", op, "] from is out of bounds for ",
                dtype_name(t));
    EMBER_CHECK(hi >= dtype_lo && hi <= dtype_hi, "[", op, "] to - 1 is out of bounds for ",
                dtype_name(t));
  }
  EMBER_CHECK(lo <= hi, "[", op,
              "] random_ expects 'from' to be less than 'to', but got from=", int64_t(lo),
              " >= to=", int64_t(hi) + 1);
  const unsigned __int128 span = static_cast<unsigned __int128>(hi - lo) + 1;
  const uint64_t range = span == (static_cast<unsigned __int128>(1) << 64) ? 0 : uint64_t(span);
  const int64_t from = static_cast<int64_t>(lo);
  return fill_random(self, op, self.numel(), random_int_values_per_block(range), gen,
                     [&](const Tensor& out, PhiloxState st) {
                       random_int_stub(out.device(), out, from, range, st);
                     });
}

Tensor& bernoulli_(Tensor& self, double p, Generator* gen) {
  const char* op = "bernoulli_";
  EMBER_CHECK_T(NotImplementedError, !self.is_complex(), "[", op, "] not implemented for dtype ",
                dtype_name(self.dtype()));
  EMBER_CHECK(p >= 0.0 && p <= 1.0, "[", op,
              "] bernoulli_ expects p to be in [0, 1], but got p=", p);
  return fill_random(self, op, self.numel(), kBernoulliValuesPerBlock, gen,
                     [&](const Tensor& out, PhiloxState st) {
                       bernoulli_stub(out.device(), out, Tensor(), p, st);
                     });
}

Tensor& bernoulli_(Tensor& self, const Tensor& p, Generator* gen) {
  const char* op = "bernoulli_";
  EMBER_CHECK_T(NotImplementedError, !self.is_complex(), "[", op, "] not implemented for dtype ",
                dtype_name(self.dtype()));
  EMBER_CHECK_T(NotImplementedError, p.is_floating_point(), "[", op,
                "] not implemented for p of dtype ", dtype_name(p.dtype()),
                ": p must be a floating point tensor");
  Tensor probs = as_float64(expand(p, self.sizes()), op);
  const double* pd = probs.data<double>();
  for (int64_t i = 0, n = probs.numel(); i < n; ++i) {
    EMBER_CHECK(pd[i] >= 0.0 && pd[i] <= 1.0, "[", op,
                "] expects all elements of p to be in [0, 1], but found p=", pd[i]);
  }
  return fill_random(self, op, self.numel(), kBernoulliValuesPerBlock, gen,
                     [&](const Tensor& out, PhiloxState st) {
                       bernoulli_stub(out.device(), out, probs, 0.0, st);
                     });
}

namespace {
Tensor& continuous_(Tensor& self, const char* op, Continuous kind, double a, double b,
                    Generator* gen) {
  return fill_random(self, op, self.numel(), kContinuousValuesPerBlock, gen,
                     [&](const Tensor& out, PhiloxState st) {
                       continuous_stub(out.device(), out, kind, a, b, st);
                     });
}
}  // namespace

Tensor& exponential_(Tensor& self, double lambd, Generator* gen) {
  const char* op = "exponential_";
  EMBER_CHECK(self.is_floating_point(), "[", op,
              "] Exponential distribution is a continuous probability distribution. dtype must be "
              "a floating point but you specified ",
              dtype_name(self.dtype()));
  EMBER_CHECK(lambd > 0.0, "[", op,
              "] exponential_ expects lambda > 0.0, but found lambda=", lambd);
  return continuous_(self, op, Continuous::Exponential, lambd, 0.0, gen);
}

Tensor& geometric_(Tensor& self, double p, Generator* gen) {
  const char* op = "geometric_";
  EMBER_CHECK_T(NotImplementedError, is_integral(self.dtype(), false) || self.is_floating_point(),
                "[", op, "] not implemented for dtype ", dtype_name(self.dtype()));
  EMBER_CHECK(p > 0.0 && p < 1.0, "[", op, "] geometric_ expects p to be in (0, 1), but got p=", p);
  return continuous_(self, op, Continuous::Geometric, p, 0.0, gen);
}

Tensor& log_normal_(Tensor& self, double mean, double std, Generator* gen) {
  const char* op = "log_normal_";
  check_floating(self, op, /*allow_complex=*/false);
  EMBER_CHECK(std > 0.0, "[", op, "] log_normal_ expects std > 0.0, but found std=", std);
  return continuous_(self, op, Continuous::LogNormal, mean, std, gen);
}

Tensor& cauchy_(Tensor& self, double median, double sigma, Generator* gen) {
  const char* op = "cauchy_";
  EMBER_CHECK(self.is_floating_point(), "[", op,
              "] Cauchy distribution is a continuous probability distribution. dtype must be a "
              "floating point but you specified ",
              dtype_name(self.dtype()));
  EMBER_CHECK(sigma > 0.0, "[", op, "] cauchy_ expects sigma > 0.0, but found sigma=", sigma);
  return continuous_(self, op, Continuous::Cauchy, median, sigma, gen);
}

// --- factories
// ------------------------------------------------------------------------------------

Tensor rand(IntArrayRef size, TensorOptions opts, Generator* gen) {
  Tensor t = empty_tensor(size, opts.dtype_or(default_dtype()), opts.device, "rand");
  check_floating(t, "rand", /*allow_complex=*/true);
  return uniform_(t, 0.0, 1.0, gen);
}

Tensor randn(IntArrayRef size, TensorOptions opts, Generator* gen) {
  Tensor t = empty_tensor(size, opts.dtype_or(default_dtype()), opts.device, "randn");
  check_floating(t, "randn", /*allow_complex=*/true);
  return normal_(t, 0.0, 1.0, gen);
}

Tensor randint(int64_t low, int64_t high, IntArrayRef size, TensorOptions opts, Generator* gen) {
  Tensor t = empty_tensor(size, opts.dtype_or(ScalarType::Int64), opts.device, "randint");
  return random_(t, low, high, gen);
}

Tensor randperm(int64_t n, TensorOptions opts, Generator* gen) {
  const char* op = "randperm";
  const ScalarType t = opts.dtype_or(ScalarType::Int64);
  EMBER_CHECK(n >= 0, "[", op, "] n must be non-negative, got ", n);
  EMBER_CHECK_T(NotImplementedError, t != ScalarType::Bool && !is_complex(t), "[", op,
                "] not implemented for dtype ", dtype_name(t));
  if (is_floating(t)) {
    const int64_t limit = (int64_t(1) << mantissa_digits(t)) + 1;
    EMBER_CHECK(n <= limit, "[", op, "] n cannot be greater than ", limit, " for ", dtype_name(t),
                " (larger values are not exactly representable)");
  } else {
    int64_t lo, hi;
    integral_range(t, &lo, &hi);
    EMBER_CHECK(n == 0 || n - 1 <= hi, "[", op, "] value ", n - 1, " cannot be converted to type ",
                dtype_name(t), " without overflow");
  }
  Tensor out = empty_tensor({n}, t, opts.device, op);
  return fill_random(out, op, n, kRandpermValuesPerBlock, gen,
                     [&](const Tensor& o, PhiloxState st) { randperm_stub(o.device(), o, st); });
}

namespace {
void check_std_tensor(const Tensor& std, const char* op) {
  Tensor s = as_float64(std, op);
  const double* d = s.data<double>();
  for (int64_t i = 0, n = s.numel(); i < n; ++i) {
    EMBER_CHECK(d[i] >= 0.0, "[", op, "] normal expects all elements of std >= 0.0");
  }
}
}  // namespace

Tensor normal_noise(const Tensor& mean, const Tensor& std, Generator* gen) {
  const char* op = "normal";
  check_floating(mean, op, false);
  check_floating(std, op, false);
  DimVector shape = broadcast_shapes(mean.sizes(), std.sizes(), op);
  check_std_tensor(std, op);
  Tensor out = empty_tensor(shape, mean.dtype(), mean.device(), op);
  return normal_(out, 0.0, 1.0, gen);
}

Tensor normal_noise(const Tensor& mean, double std, Generator* gen) {
  const char* op = "normal";
  check_floating(mean, op, false);
  EMBER_CHECK(std >= 0.0, "[", op, "] normal expects std >= 0.0, but found std ", std);
  Tensor out = empty_tensor(mean.sizes(), mean.dtype(), mean.device(), op);
  return normal_(out, 0.0, std, gen);
}

Tensor normal_noise(double /*mean*/, const Tensor& std, Generator* gen) {
  const char* op = "normal";
  check_floating(std, op, false);
  check_std_tensor(std, op);
  Tensor out = empty_tensor(std.sizes(), std.dtype(), std.device(), op);
  return normal_(out, 0.0, 1.0, gen);
}

Tensor normal(double mean, double std, IntArrayRef size, TensorOptions opts, Generator* gen) {
  const char* op = "normal";
  EMBER_CHECK(std >= 0.0, "[", op, "] normal expects std >= 0.0, but found std ", std);
  Tensor out = empty_tensor(size, opts.dtype_or(default_dtype()), opts.device, op);
  check_floating(out, op, true);
  return normal_(out, mean, std, gen);
}

Tensor bernoulli(const Tensor& p, Generator* gen) {
  EMBER_CHECK_T(NotImplementedError, p.is_floating_point(), "[bernoulli] not implemented for ",
                "dtype ", dtype_name(p.dtype()), ": p must be a floating point tensor");
  Tensor out = empty_tensor(p.sizes(), p.dtype(), p.device(), "bernoulli");
  return bernoulli_(out, p, gen);
}

Tensor bernoulli(const Tensor& self, double p, Generator* gen) {
  Tensor out = empty_tensor(self.sizes(), self.dtype(), self.device(), "bernoulli");
  return bernoulli_(out, p, gen);
}

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement, Generator* gen) {
  const char* op = "multinomial";
  EMBER_CHECK(probs.dim() == 1 || probs.dim() == 2, "[", op, "] prob_dist must be 1 or 2 dim, got ",
              probs.dim(), " dims");
  EMBER_CHECK(probs.is_floating_point(), "[", op,
              "] multinomial only supports floating-point dtypes for input, got: ",
              dtype_name(probs.dtype()));
  EMBER_CHECK(num_samples > 0, "[", op, "] cannot sample n_sample <= 0 samples");
  const int64_t ncat = probs.size(probs.dim() - 1);
  EMBER_CHECK(replacement || num_samples <= ncat, "[", op,
              "] cannot sample n_sample > prob_dist.size(-1) samples without replacement (",
              num_samples, " > ", ncat, ")");
  EMBER_CHECK(ncat <= (int64_t(1) << 24), "[", op, "] number of categories cannot exceed 2^24");
  const int64_t rows = probs.dim() == 1 ? 1 : probs.size(0);
  Tensor out = probs.dim() == 1
                   ? empty_tensor({num_samples}, ScalarType::Int64, probs.device(), op)
                   : empty_tensor({rows, num_samples}, ScalarType::Int64, probs.device(), op);
  if (rows == 0) return out;
  Tensor p = as_float64(probs, op);
  const double* pd = p.data<double>();
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (int64_t c = 0; c < ncat; ++c) {
      const double v = pd[r * ncat + c];
      EMBER_CHECK(std::isfinite(v) && v >= 0.0, "[", op,
                  "] probability tensor contains either `inf`, `nan` or element < 0");
      sum += v;
    }
    EMBER_CHECK(sum > 0.0, "[", op,
                "] invalid multinomial distribution (sum of probabilities <= 0)");
  }
  const int64_t nvalues = replacement ? rows * num_samples : rows * ncat;
  return fill_random(out, op, nvalues, kMultinomialValuesPerBlock, gen,
                     [&](const Tensor& o, PhiloxState st) {
                       multinomial_stub(o.device(), o, p, replacement, st);
                     });
}

}  // namespace native
}  // namespace ember
