// Order statistics: median, nanmedian, mode, quantile, nanquantile.
#include <cmath>
#include <limits>

#include "core/shape.h"
#include "dispatch/copy.h"
#include "dispatch/tensor_iterator.h"
#include "kernels/reduce_stubs.h"
#include "ops/creation.h"
#include "ops/reduce.h"
#include "ops/reduce_common.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(median_stub, MedianFn);
EMBER_DEFINE_STUB(mode_stub, ModeFn);
EMBER_DEFINE_STUB(quantile_stub, QuantileFn);

namespace {

void check_real(const Tensor& t, const char* op, bool allow_bool) {
  EMBER_CHECK_T(NotImplementedError,
                !t.is_complex() && (allow_bool || t.dtype() != ScalarType::Bool), "[", op,
                "] not implemented for dtype ", dtype_name(t.dtype()));
}

// An output of a dim-wise order statistic: `out` resized to the result shape, or a new tensor.
// Returns it together with the keepdim-shaped view the kernel writes.
std::pair<Tensor, Tensor> dim_output(const Tensor& in, int64_t dim, bool keepdim, ScalarType dtype,
                                     const Tensor& out, const char* op) {
  DimVector keep_shape(in.sizes());
  keep_shape[dim] = 1;
  DimVector shape = keep_shape;
  if (!keepdim) shape.erase(dim);
  Tensor res;
  if (out.defined()) {
    EMBER_CHECK(!out.storage()->read_only(), "[", op,
                "] cannot write to a tensor backed by a read-only NumPy array");
    check_reduction_out_dtype(out, dtype, op);
    resize_output(out, shape, op);
    res = out;
  } else {
    res = empty_tensor(shape, dtype, in.device(), op);
  }
  return {res, keepdim ? res : unsqueeze(res, dim)};
}

// (values, indices) of a per-line kernel along dim; a 0-d input is one line of length 1.
// check_dtype runs after the empty-dim check, as in PyTorch.
template <typename Check, typename Launch>
TensorPair dim_statistic(const char* op, const Tensor& t, int64_t dim, bool keepdim,
                         const Tensor& values, const Tensor& indices, const Check& check_dtype,
                         const Launch& launch) {
  const int64_t d = wrap_dim(dim, t.dim(), op);
  Tensor in = t.dim() == 0 ? reshape(t, {1}) : t;
  const bool kd = keepdim || t.dim() == 0;
  EMBER_CHECK_T(IndexError, in.size(d) != 0, "[", op, "] ", op, "(): Expected reduction dim ", d,
                " to have non-zero size.");
  check_dtype();
  auto [v, vk] = dim_output(in, d, kd, t.dtype(), values, op);
  auto [i, ik] = dim_output(in, d, kd, ScalarType::Int64, indices, op);
  if (t.dim() == 0) {  // one element: itself, at index 0
    copy_into(vk, in, op);
    fill_(ik, Scalar(int64_t(0)));
  } else if (in.numel() != 0) {
    DimWalk walk;
    TensorIterator iter = make_dim_iterator({vk, ik}, in, d, op, &walk);
    launch(iter, walk);
  }
  if (t.dim() == 0) {  // back to 0-d
    v = values.defined() ? v : view(v, {});
    i = indices.defined() ? i : view(i, {});
    if (values.defined()) resize_output(values, {}, op);
    if (indices.defined()) resize_output(indices, {}, op);
  }
  if (values.defined()) values.bump_version();
  if (indices.defined()) indices.bump_version();
  return {v, i};
}

// What PyTorch returns for the median of nothing: nan converted to the dtype the way x86 does
// it (integers of 32 and 64 bits get their minimum, narrower ones 0, bool true).
Scalar empty_median_value(ScalarType t) {
  if (is_floating(t) || is_complex(t)) return Scalar(std::numeric_limits<double>::quiet_NaN());
  if (t == ScalarType::Bool) return Scalar(true);
  if (t == ScalarType::Int64) return Scalar(std::numeric_limits<int64_t>::min());
  if (t == ScalarType::Int32) return Scalar(int64_t(std::numeric_limits<int32_t>::min()));
  return Scalar(int64_t(0));
}

Tensor median_all(const char* op, bool ignore_nan, const Tensor& t, const Tensor& out) {
  if (out.defined()) check_reduction_out_dtype(out, t.dtype(), op);
  Tensor res;
  if (t.numel() == 0) {
    res = full({}, empty_median_value(t.dtype()), t.dtype());
  } else {
    check_real(t, op, /*allow_bool=*/false);
    // The values of a median along the flattened input are exactly the median of all elements.
    res = dim_statistic(
              op, reshape(t, {-1}), 0, false, {}, {}, [] {},
              [&](TensorIterator& iter, const DimWalk& walk) {
                median_stub(t.device(), iter, walk, ignore_nan);
              })
              .first;
  }
  if (!out.defined()) return res;
  resize_output(out, {}, op);
  copy_into(out, res, op);
  return out;
}

TensorPair median_dim(const char* op, bool ignore_nan, const Tensor& t, int64_t dim, bool keepdim,
                      const Tensor& values, const Tensor& indices) {
  return dim_statistic(
      op, t, dim, keepdim, values, indices, [&] { check_real(t, op, /*allow_bool=*/false); },
      [&](TensorIterator& iter, const DimWalk& walk) {
        median_stub(t.device(), iter, walk, ignore_nan);
      });
}

Tensor quantile_impl(const char* op, bool ignore_nan, const Tensor& t, const std::vector<double>& q,
                     bool q_is_vector, std::optional<int64_t> dim, bool keepdim,
                     QuantileInterpolation mode, const Tensor& out) {
  EMBER_CHECK(t.numel() > 0, "[", op, "] ", op, "() input tensor must be non-empty");
  EMBER_CHECK(t.dtype() == ScalarType::Float32 || t.dtype() == ScalarType::Float64, "[", op, "] ",
              op, "() input tensor must be either float or double dtype");
  if (out.defined()) {
    EMBER_CHECK(out.dtype() == t.dtype(), "[", op, "] ", op,
                "() out tensor must be same dtype as the input tensor");
  }
  for (double v : q) {
    EMBER_CHECK(v >= 0 && v <= 1, "[", op, "] ", op, "() q values must be in the range [0, 1]");
  }
  const int64_t d = wrap_dim(dim.value_or(0), t.dim(), op);
  // Result shape: q's length (for a 1-d q), then the reduced shape.
  DimVector out_shape;
  if (dim && t.dim() > 0) {
    out_shape = DimVector(t.sizes());
    if (keepdim)
      out_shape[d] = 1;
    else
      out_shape.erase(d);
  } else if (keepdim) {
    out_shape = DimVector(static_cast<size_t>(t.dim()), 1);
  }
  if (q_is_vector) out_shape.insert(0, static_cast<int64_t>(q.size()));
  // Lines are reduced along d of `in`: the flattened input when no dim is given.
  Tensor in = (dim && t.dim() > 0) ? t : reshape(t, {-1});
  const int64_t axis = (dim && t.dim() > 0) ? d : 0;
  EMBER_CHECK(in.size(axis) <= (int64_t(1) << 24), "[", op, "] ", op,
              "() input tensor is too large");
  DimVector buf_shape(in.sizes());
  buf_shape[axis] = 1;
  buf_shape.insert(0, static_cast<int64_t>(q.size()));
  Tensor buf = empty_tensor(buf_shape, t.dtype(), t.device(), op);
  if (!q.empty()) {
    DimWalk walk;
    TensorIterator iter = make_dim_iterator({select(buf, 0, 0)}, in, axis, op, &walk);
    quantile_stub(t.device(), iter, walk, q, buf.stride(0) * static_cast<int64_t>(buf.itemsize()),
                  mode, ignore_nan);
  }
  Tensor res = view(buf, out_shape);
  if (!out.defined()) return res;
  resize_output(out, out_shape, op);
  copy_into(out, res, op);
  return out;
}

std::vector<double> q_values(const Tensor& t, const Tensor& q, const char* op) {
  EMBER_CHECK(q.dim() <= 1, "[", op, "] ", op, "() q must be a scalar or 1D tensor");
  EMBER_CHECK(t.numel() == 0 ||
                  !(t.dtype() == ScalarType::Float32 || t.dtype() == ScalarType::Float64) ||
                  q.dtype() == t.dtype(),
              "[", op, "] ", op, "() q tensor must be same dtype as the input tensor");
  Tensor qd = contiguous(to_dtype(q, ScalarType::Float64));
  const double* p = qd.data<double>();
  return std::vector<double>(p, p + qd.numel());
}

Tensor quantile_scalar(const char* op, bool ignore_nan, const Tensor& t, double q,
                       std::optional<int64_t> dim, bool keepdim, QuantileInterpolation mode,
                       const Tensor& out) {
  EMBER_CHECK(q >= 0 && q <= 1, "[", op, "] ", op, "() q must be in the range [0, 1] but got ", q);
  return quantile_impl(op, ignore_nan, t, {q}, false, dim, keepdim, mode, out);
}

}  // namespace

Tensor median(const Tensor& t, const Tensor& out) {
  return median_all("median", false, t, out);
}

Tensor nanmedian(const Tensor& t, const Tensor& out) {
  return median_all("nanmedian", true, t, out);
}

TensorPair median(const Tensor& t, int64_t dim, bool keepdim, const Tensor& values,
                  const Tensor& indices) {
  return median_dim("median", false, t, dim, keepdim, values, indices);
}

TensorPair nanmedian(const Tensor& t, int64_t dim, bool keepdim, const Tensor& values,
                     const Tensor& indices) {
  return median_dim("nanmedian", true, t, dim, keepdim, values, indices);
}

TensorPair mode(const Tensor& t, int64_t dim, bool keepdim, const Tensor& values,
                const Tensor& indices) {
  return dim_statistic(
      "mode", t, dim, keepdim, values, indices,
      [&] {
        // PyTorch skips the dtype check for empty and 0-d inputs.
        if (t.numel() != 0 && t.dim() != 0) check_real(t, "mode", true);
      },
      [&](TensorIterator& iter, const DimWalk& walk) { mode_stub(t.device(), iter, walk); });
}

QuantileInterpolation parse_quantile_interpolation(const std::string& name, const char* op) {
  if (name == "linear") return QuantileInterpolation::Linear;
  if (name == "lower") return QuantileInterpolation::Lower;
  if (name == "higher") return QuantileInterpolation::Higher;
  if (name == "midpoint") return QuantileInterpolation::Midpoint;
  if (name == "nearest") return QuantileInterpolation::Nearest;
  EMBER_THROW(Error, "[", op, "] ", op,
              "() interpolation must be one of linear, lower, higher, "
              "midpoint or nearest, but got ",
              name);
}

Tensor quantile(const Tensor& t, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                QuantileInterpolation interpolation, const Tensor& out) {
  const char* op = "quantile";
  EMBER_CHECK(t.numel() > 0, "[", op, "] ", op, "() input tensor must be non-empty");
  return quantile_impl(op, false, t, q_values(t, q, op), q.dim() == 1, dim, keepdim, interpolation,
                       out);
}

Tensor quantile(const Tensor& t, double q, std::optional<int64_t> dim, bool keepdim,
                QuantileInterpolation interpolation, const Tensor& out) {
  return quantile_scalar("quantile", false, t, q, dim, keepdim, interpolation, out);
}

Tensor nanquantile(const Tensor& t, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                   QuantileInterpolation interpolation, const Tensor& out) {
  const char* op = "nanquantile";
  EMBER_CHECK(t.numel() > 0, "[", op, "] ", op, "() input tensor must be non-empty");
  return quantile_impl(op, true, t, q_values(t, q, op), q.dim() == 1, dim, keepdim, interpolation,
                       out);
}

Tensor nanquantile(const Tensor& t, double q, std::optional<int64_t> dim, bool keepdim,
                   QuantileInterpolation interpolation, const Tensor& out) {
  return quantile_scalar("nanquantile", true, t, q, dim, keepdim, interpolation, out);
}

}  // namespace native
}  // namespace ember
