#include "ops/range_factories.h"

#include <cmath>
#include <limits>

#include "core/shape.h"
#include "dispatch/tensor_iterator.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(arange_stub, ArangeFn);
EMBER_DEFINE_STUB(linspace_stub, LinspaceFn);
EMBER_DEFINE_STUB(logspace_stub, LogspaceFn);
EMBER_DEFINE_STUB(complex_stub, ComplexFromRealFn);
EMBER_DEFINE_STUB(polar_stub, ComplexFromRealFn);

namespace {

void check_real_bounds(const Scalar& start, const Scalar& end, const Scalar& step, const char* op) {
  EMBER_CHECK(!start.is_complex() && !end.is_complex() && !step.is_complex(), "[", op,
              "] complex start, end or step is not supported");
  const double s = start.to_double(), e = end.to_double(), st = step.to_double();
  EMBER_CHECK(st != 0.0, "[", op, "] step must be nonzero");
  EMBER_CHECK(std::isfinite(st), "[", op, "] step must be finite but got ", st);
  EMBER_CHECK(std::isfinite(s) && std::isfinite(e), "[", op, "] unsupported range: ", s, " -> ", e);
  EMBER_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), "[", op,
              "] upper bound and lower bound inconsistent with step sign");
}

void check_range_dtype(ScalarType t, const char* op) {
  EMBER_CHECK_T(NotImplementedError, t != ScalarType::Bool && !is_complex(t), "[", op,
                "] not implemented for dtype ", dtype_name(t));
}

bool all_integral(std::initializer_list<const Scalar*> scalars) {
  for (const Scalar* s : scalars) {
    if (!s->is_integral() && !s->is_bool()) return false;
  }
  return true;
}

int64_t checked_length(double size_d, const char* op) {
  EMBER_CHECK(size_d >= 0 && size_d <= static_cast<double>(std::numeric_limits<int64_t>::max()),
              "[", op, "] invalid size, possible overflow?");
  return static_cast<int64_t>(size_d);
}

}  // namespace

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions opts) {
  const char* op = "arange";
  check_real_bounds(start, end, step, op);
  const bool integral_args = all_integral({&start, &end, &step});
  const ScalarType dtype = opts.dtype_or(integral_args ? ScalarType::Int64 : default_dtype());
  check_range_dtype(dtype, op);
  int64_t size;
  if (dtype == ScalarType::Int64 && integral_args) {
    // Exact integer arithmetic (int64 has more precision than double); 128-bit avoids overflow
    // of end - start.
    const __int128 s = start.to_int64(), e = end.to_int64(), st = step.to_int64();
    const __int128 sgn = st > 0 ? 1 : -1;
    size = static_cast<int64_t>((e - s + st - sgn) / st);
  } else {
    size = checked_length(std::ceil((end.to_double() - start.to_double()) / step.to_double()), op);
  }
  Tensor out = empty_tensor({size}, dtype, opts.device, op);
  if (size > 0) arange_stub(out.device(), out, start, step);
  return out;
}

Tensor range(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions opts) {
  const char* op = "range";
  check_real_bounds(start, end, step, op);
  const ScalarType dtype = opts.dtype_or(default_dtype());
  check_range_dtype(dtype, op);
  int64_t size;
  if (is_integral(dtype, false)) {
    // Integer dtypes convert the bounds first (range(0, 5.5, 2, dtype=int64) is [0, 2, 4]).
    const int64_t s = start.to_int64(), e = end.to_int64(), st = step.to_int64();
    EMBER_CHECK(st != 0, "[", op, "] step must be nonzero");
    EMBER_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), "[", op,
                "] upper bound and lower bound inconsistent with step sign");
    size = static_cast<int64_t>((__int128(e) - s) / st) + 1;
  } else {
    size = checked_length(std::floor((end.to_double() - start.to_double()) / step.to_double()) + 1,
                          op);
  }
  Tensor out = empty_tensor({size}, dtype, opts.device, op);
  if (size > 0) arange_stub(out.device(), out, start, step);
  return out;
}

namespace {
ScalarType spaced_dtype(const Scalar& start, const Scalar& end, TensorOptions opts,
                        const char* op) {
  const bool cplx = start.is_complex() || end.is_complex();
  const ScalarType dtype = opts.dtype_or(cplx ? default_complex_dtype() : default_dtype());
  EMBER_CHECK_T(NotImplementedError, dtype != ScalarType::Bool, "[", op,
                "] not implemented for dtype bool");
  EMBER_CHECK_T(TypeError, !cplx || is_complex(dtype), "[", op,
                "] complex start or end needs a complex dtype, got ", dtype_name(dtype));
  return dtype;
}
}  // namespace

Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, TensorOptions opts) {
  const char* op = "linspace";
  EMBER_CHECK(steps >= 0, "[", op, "] number of steps must be non-negative, got ", steps);
  const ScalarType dtype = spaced_dtype(start, end, opts, op);
  Tensor out = empty_tensor({steps}, dtype, opts.device, op);
  if (steps > 0) linspace_stub(out.device(), out, start, end);
  return out;
}

Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base,
                TensorOptions opts) {
  const char* op = "logspace";
  EMBER_CHECK(steps >= 0, "[", op, "] number of steps must be non-negative, got ", steps);
  const ScalarType dtype = spaced_dtype(start, end, opts, op);
  Tensor out = empty_tensor({steps}, dtype, opts.device, op);
  if (steps > 0) logspace_stub(out.device(), out, start, end, base);
  return out;
}

Tensor eye(int64_t n, int64_t m, TensorOptions opts) {
  const char* op = "eye";
  EMBER_CHECK(n >= 0, "[", op, "] n must be greater or equal to 0, got ", n);
  EMBER_CHECK(m >= 0, "[", op, "] m must be greater or equal to 0, got ", m);
  Tensor out = empty_tensor({n, m}, opts.dtype_or(default_dtype()), opts.device, op);
  zero_fresh(out);
  const int64_t diag = std::min(n, m);
  if (diag > 0) {
    Tensor d = as_strided(out, {diag}, {m + 1}, 0);  // the main diagonal as a strided view
    fill_fresh(d, Scalar(int64_t(1)));
  }
  return out;
}

namespace {
// Shared by complex() and polar(): two real inputs of one floating dtype, a complex output.
Tensor complex_from_real(const char* op, const Tensor& a, const Tensor& b, const Tensor& out,
                         bool polar_form) {
  EMBER_CHECK(a.dtype() == b.dtype(), "[", op, "] Expected object of scalar type ",
              dtype_name(a.dtype()), " but got scalar type ", dtype_name(b.dtype()),
              " for second argument '", polar_form ? "angle" : "imag", "'");
  EMBER_CHECK_T(NotImplementedError,
                a.dtype() == ScalarType::Float32 || a.dtype() == ScalarType::Float64, "[", op,
                "] Expected both inputs to be Float or Double tensors but got ",
                dtype_name(a.dtype()), " and ", dtype_name(b.dtype()),
                a.dtype() == ScalarType::Float16 ? " (Ember has no complex32 dtype)" : "");
  const ScalarType ctype = to_complex(a.dtype());
  if (out.defined()) {
    EMBER_CHECK(out.dtype() == ctype, "[", op, "] Expected object of scalar type ",
                dtype_name(ctype), " but got ", dtype_name(out.dtype()), " for argument 'out'");
    resize_output(out, broadcast_shapes(a.sizes(), b.sizes(), op), op);
  }
  TensorIterator iter = TensorIteratorConfig()
                            .name(op)
                            .add_output(out)
                            .add_input(a)
                            .add_input(b)
                            .output_dtype(ctype)
                            .build();
  if (iter.numel() > 0) {
    if (polar_form) {
      polar_stub(iter.device(), iter);
    } else {
      complex_stub(iter.device(), iter);
    }
  }
  if (out.defined()) out.bump_version();
  return iter.output(0);
}
}  // namespace

Tensor complex(const Tensor& real, const Tensor& imag, const Tensor& out) {
  return complex_from_real("complex", real, imag, out, false);
}

Tensor polar(const Tensor& abs, const Tensor& angle, const Tensor& out) {
  return complex_from_real("polar", abs, angle, out, true);
}

}  // namespace native
}  // namespace ember
