// Public reductions and scans: each records its node (autograd/derivatives/reduce*.cpp) when
// an input requires grad and otherwise runs the native op; nanmean is a composite of public ops.
#include "api/reduce.h"

#include "api/autocast.h"
#include "api/elementwise.h"
#include "autograd/derivatives/reduce.h"
#include "autograd/variable.h"
#include "ops/creation.h"

namespace ember {

// ---- sums and products ----

Tensor sum(const Tensor& t, const DimList& dims, bool keepdim, ScalarType dtype,
           const Tensor& out) {
  if (autograd::should_record(t)) return derivatives::sum(t, dims, keepdim, dtype, out);
  return native::sum(t, dims, keepdim, dtype, out);
}

Tensor nansum(const Tensor& t, const DimList& dims, bool keepdim, ScalarType dtype,
              const Tensor& out) {
  if (autograd::should_record(t)) return derivatives::nansum(t, dims, keepdim, dtype, out);
  return native::nansum(t, dims, keepdim, dtype, out);
}

Tensor mean(const Tensor& t, const DimList& dims, bool keepdim, ScalarType dtype,
            const Tensor& out) {
  if (autograd::should_record(t)) return derivatives::mean(t, dims, keepdim, dtype, out);
  return native::mean(t, dims, keepdim, dtype, out);
}

// A composite, as PyTorch's: the gradient flows through nansum and div (grad_fn DivBackward0).
Tensor nanmean(const Tensor& t, const DimList& dims, bool keepdim, ScalarType dtype,
               const Tensor& out) {
  const char* op = "nanmean";
  EMBER_CHECK_T(NotImplementedError, t.is_floating_point() || t.is_complex(), "[", op,
                "] expected input to have floating point or complex dtype but got ",
                dtype_name(t.dtype()));
  Tensor total = ember::nansum(t, dims, keepdim, dtype);
  Tensor count = native::count_non_nan(t, dims, keepdim, op);
  if (out.defined()) native::resize_output(out, total.sizes(), op);
  return ember::div(total, count, out);
}

Tensor prod(const Tensor& t, std::optional<int64_t> dim, bool keepdim, ScalarType dtype,
            const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: float32
    const Tensor t2 = autocast::to_fp32(t);
    autocast::ExcludeGuard no_autocast;
    return ember::prod(t2, dim, keepdim, dtype);
  }
  if (autograd::should_record(t)) return derivatives::prod(t, dim, keepdim, dtype, out);
  return native::prod(t, dim, keepdim, dtype, out);
}

// ---- extrema ----

Tensor amax(const Tensor& t, const DimList& dims, bool keepdim, const Tensor& out) {
  if (autograd::should_record(t)) return derivatives::amax(t, dims, keepdim, out);
  return native::amax(t, dims, keepdim, out);
}

Tensor amin(const Tensor& t, const DimList& dims, bool keepdim, const Tensor& out) {
  if (autograd::should_record(t)) return derivatives::amin(t, dims, keepdim, out);
  return native::amin(t, dims, keepdim, out);
}

Tensor max(const Tensor& t, const Tensor& out) {
  if (autograd::should_record(t)) return derivatives::max(t, out);
  return native::max(t, out);
}

Tensor min(const Tensor& t, const Tensor& out) {
  if (autograd::should_record(t)) return derivatives::min(t, out);
  return native::min(t, out);
}

TensorPair max(const Tensor& t, int64_t dim, bool keepdim, const Tensor& values,
               const Tensor& indices) {
  if (autograd::should_record(t)) return derivatives::max(t, dim, keepdim, values, indices);
  return native::max(t, dim, keepdim, values, indices);
}

TensorPair min(const Tensor& t, int64_t dim, bool keepdim, const Tensor& values,
               const Tensor& indices) {
  if (autograd::should_record(t)) return derivatives::min(t, dim, keepdim, values, indices);
  return native::min(t, dim, keepdim, values, indices);
}

TensorPair aminmax(const Tensor& t, std::optional<int64_t> dim, bool keepdim, const Tensor& min_out,
                   const Tensor& max_out) {
  if (autograd::should_record(t)) return derivatives::aminmax(t, dim, keepdim, min_out, max_out);
  return native::aminmax(t, dim, keepdim, min_out, max_out);
}

// ---- statistics ----

Tensor var(const Tensor& t, const DimList& dims, const std::optional<Scalar>& correction,
           bool keepdim, const Tensor& out) {
  if (autograd::should_record(t)) return derivatives::var(t, dims, correction, keepdim, out);
  return native::var(t, dims, correction, keepdim, out);
}

Tensor std(const Tensor& t, const DimList& dims, const std::optional<Scalar>& correction,
           bool keepdim, const Tensor& out) {
  if (autograd::should_record(t)) return derivatives::std(t, dims, correction, keepdim, out);
  return native::std(t, dims, correction, keepdim, out);
}

TensorPair var_mean(const Tensor& t, const DimList& dims, const std::optional<Scalar>& correction,
                    bool keepdim, const Tensor& out0, const Tensor& out1) {
  if (autograd::should_record(t)) {
    return derivatives::var_mean(t, dims, correction, keepdim, out0, out1);
  }
  return native::var_mean(t, dims, correction, keepdim, out0, out1);
}

TensorPair std_mean(const Tensor& t, const DimList& dims, const std::optional<Scalar>& correction,
                    bool keepdim, const Tensor& out0, const Tensor& out1) {
  if (autograd::should_record(t)) {
    return derivatives::std_mean(t, dims, correction, keepdim, out0, out1);
  }
  return native::std_mean(t, dims, correction, keepdim, out0, out1);
}

Tensor norm(const Tensor& t, NormOrder p, const DimList& dims, bool keepdim, ScalarType dtype,
            const Tensor& out) {
  if (autograd::should_record(t)) return derivatives::norm(t, p, dims, keepdim, dtype, out);
  return native::norm(t, p, dims, keepdim, dtype, out);
}

Tensor logsumexp(const Tensor& t, const DimList& dims, bool keepdim, const Tensor& out) {
  if (autograd::should_record(t)) return derivatives::logsumexp(t, dims, keepdim, out);
  return native::logsumexp(t, dims, keepdim, out);
}

// ---- scans ----

Tensor cumsum(const Tensor& t, int64_t dim, ScalarType dtype, const Tensor& out) {
  if (autograd::should_record(t)) return derivatives::cumsum(t, dim, dtype, out);
  return native::cumsum(t, dim, dtype, out);
}

Tensor cumprod(const Tensor& t, int64_t dim, ScalarType dtype, const Tensor& out) {
  if (autograd::should_record(t)) return derivatives::cumprod(t, dim, dtype, out);
  return native::cumprod(t, dim, dtype, out);
}

TensorPair cummax(const Tensor& t, int64_t dim, const Tensor& values, const Tensor& indices) {
  if (autograd::should_record(t)) return derivatives::cummax(t, dim, values, indices);
  return native::cummax(t, dim, values, indices);
}

TensorPair cummin(const Tensor& t, int64_t dim, const Tensor& values, const Tensor& indices) {
  if (autograd::should_record(t)) return derivatives::cummin(t, dim, values, indices);
  return native::cummin(t, dim, values, indices);
}

Tensor logcumsumexp(const Tensor& t, int64_t dim, const Tensor& out) {
  if (autograd::should_record(t)) return derivatives::logcumsumexp(t, dim, out);
  return native::logcumsumexp(t, dim, out);
}

// ---- order statistics ----

Tensor median(const Tensor& t, const Tensor& out) {
  if (autograd::should_record(t)) return derivatives::median(t, out);
  return native::median(t, out);
}

Tensor nanmedian(const Tensor& t, const Tensor& out) {
  if (autograd::should_record(t)) return derivatives::nanmedian(t, out);
  return native::nanmedian(t, out);
}

TensorPair median(const Tensor& t, int64_t dim, bool keepdim, const Tensor& values,
                  const Tensor& indices) {
  if (autograd::should_record(t)) return derivatives::median(t, dim, keepdim, values, indices);
  return native::median(t, dim, keepdim, values, indices);
}

TensorPair nanmedian(const Tensor& t, int64_t dim, bool keepdim, const Tensor& values,
                     const Tensor& indices) {
  if (autograd::should_record(t)) return derivatives::nanmedian(t, dim, keepdim, values, indices);
  return native::nanmedian(t, dim, keepdim, values, indices);
}

TensorPair mode(const Tensor& t, int64_t dim, bool keepdim, const Tensor& values,
                const Tensor& indices) {
  if (autograd::should_record(t)) return derivatives::mode(t, dim, keepdim, values, indices);
  return native::mode(t, dim, keepdim, values, indices);
}

namespace {

// As PyTorch's composite quantile: q takes part in the graph through the linear weights only.
bool quantile_records(const Tensor& t, const Tensor& q, QuantileInterpolation mode) {
  return autograd::should_record(t) ||
         (mode == QuantileInterpolation::Linear && autograd::should_record(q));
}

}  // namespace

Tensor quantile(const Tensor& t, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                QuantileInterpolation interpolation, const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: float32
    const Tensor t2 = autocast::to_fp32(t), q2 = autocast::to_fp32(q);
    autocast::ExcludeGuard no_autocast;
    return ember::quantile(t2, q2, dim, keepdim, interpolation);
  }
  if (quantile_records(t, q, interpolation)) {
    return derivatives::quantile(false, t, q, 0.0, dim, keepdim, interpolation, out);
  }
  return native::quantile(t, q, dim, keepdim, interpolation, out);
}

Tensor quantile(const Tensor& t, double q, std::optional<int64_t> dim, bool keepdim,
                QuantileInterpolation interpolation, const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: float32
    const Tensor t2 = autocast::to_fp32(t);
    autocast::ExcludeGuard no_autocast;
    return ember::quantile(t2, q, dim, keepdim, interpolation);
  }
  if (autograd::should_record(t)) {
    return derivatives::quantile(false, t, Tensor(), q, dim, keepdim, interpolation, out);
  }
  return native::quantile(t, q, dim, keepdim, interpolation, out);
}

Tensor nanquantile(const Tensor& t, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                   QuantileInterpolation interpolation, const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: float32
    const Tensor t2 = autocast::to_fp32(t), q2 = autocast::to_fp32(q);
    autocast::ExcludeGuard no_autocast;
    return ember::nanquantile(t2, q2, dim, keepdim, interpolation);
  }
  if (quantile_records(t, q, interpolation)) {
    return derivatives::quantile(true, t, q, 0.0, dim, keepdim, interpolation, out);
  }
  return native::nanquantile(t, q, dim, keepdim, interpolation, out);
}

Tensor nanquantile(const Tensor& t, double q, std::optional<int64_t> dim, bool keepdim,
                   QuantileInterpolation interpolation, const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: float32
    const Tensor t2 = autocast::to_fp32(t);
    autocast::ExcludeGuard no_autocast;
    return ember::nanquantile(t2, q, dim, keepdim, interpolation);
  }
  if (autograd::should_record(t)) {
    return derivatives::quantile(true, t, Tensor(), q, dim, keepdim, interpolation, out);
  }
  return native::nanquantile(t, q, dim, keepdim, interpolation, out);
}

}  // namespace ember
