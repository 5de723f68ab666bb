// Extrema: amax, amin, max, min, aminmax, argmax, argmin.
#include "core/shape.h"
#include "dispatch/copy.h"
#include "kernels/reduce_stubs.h"
#include "ops/creation.h"
#include "ops/reduce.h"
#include "ops/reduce_common.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(minmax_stub, MinMaxFn);
EMBER_DEFINE_STUB(arg_reduce_stub, ArgReduceFn);

namespace {

void check_same_out_dtype(const Tensor& t, const Tensor& out, const char* op) {
  if (!out.defined()) return;
  EMBER_CHECK(out.dtype() == t.dtype(), "[", op,
              "] Expected the dtype for input and out to "
              "match, but got ",
              dtype_name(t.dtype()), " for input's dtype and ", dtype_name(out.dtype()),
              " for out's dtype.");
}

Tensor extremum(const char* op, const char* what, MinMaxKind kind, const Tensor& t,
                const DimList& dims, bool keepdim, const Tensor& out) {
  ReduceDims rd = make_reduce_dims(t, dims, op);
  check_reduction_nonempty(t, rd, op, what);
  // Like PyTorch, an empty input never reaches the dtype check.
  EMBER_CHECK_T(NotImplementedError, !t.is_complex() || t.numel() == 0, "[", op,
                "] not implemented for dtype ", dtype_name(t.dtype()));
  check_same_out_dtype(t, out, op);
  Reduction r = make_reduction(t, rd, keepdim, t.dtype(), op, out);
  if (t.numel() != 0) minmax_stub(t.device(), r.iter, kind);
  return finish_reduction(r, rd, keepdim);
}

TensorPair extremum_dim(const char* op, bool is_max, const Tensor& t, int64_t dim, bool keepdim,
                        const Tensor& values, const Tensor& indices) {
  ReduceDims rd = single_reduce_dim(t, dim, op);
  const std::string what = std::string(op) + "()";
  check_reduction_nonempty(t, rd, op, what.c_str());
  EMBER_CHECK_T(TypeError, !t.is_complex(), "[", op, "] ", op,
                "(): does not support complex input");
  if (values.defined()) check_reduction_out_dtype(values, t.dtype(), op);
  if (indices.defined()) check_reduction_out_dtype(indices, ScalarType::Int64, op);
  Reduction r = make_reduction2(t, rd, keepdim, t.dtype(), ScalarType::Int64, op, values, indices);
  arg_reduce_stub(t.device(), r.iter, is_max);
  return finish_reduction2(r, rd, keepdim);
}

Tensor arg_extremum(const char* op, bool is_max, const Tensor& t, std::optional<int64_t> dim,
                    bool keepdim, const Tensor& out) {
  EMBER_CHECK_T(TypeError, !t.is_complex(), "[", op, "] ", op,
                "(): does not support complex input");
  EMBER_CHECK_T(NotImplementedError, t.dtype() != ScalarType::Bool, "[", op, "] ", op,
                "(): does not support bool input");
  if (out.defined()) check_reduction_out_dtype(out, ScalarType::Int64, op);
  if (dim) {
    ReduceDims rd = single_reduce_dim(t, *dim, op);
    const std::string what = std::string(op) + "()";
    check_reduction_nonempty(t, rd, op, what.c_str());
    Reduction r = make_reduction(t, rd, keepdim, ScalarType::Int64, op, out);
    arg_reduce_stub(t.device(), r.iter, is_max);
    return finish_reduction(r, rd, keepdim);
  }
  // dim=None: the index into the flattened input; keepdim keeps every dim as size 1.
  EMBER_CHECK_T(IndexError, t.numel() != 0, "[", op, "] ", op,
                "(): Expected reduction dim to "
                "be specified for input.numel() == 0.");
  Tensor flat = reshape(t, {-1});
  ReduceDims rd = single_reduce_dim(flat, 0, op);
  Reduction r = make_reduction(flat, rd, false, ScalarType::Int64, op);
  arg_reduce_stub(t.device(), r.iter, is_max);
  Tensor res = finish_reduction(r, rd, false);
  if (keepdim) res = view(res, DimVector(static_cast<size_t>(t.dim()), 1));
  if (!out.defined()) return res;
  resize_output(out, res.sizes(), op);
  copy_into(out, res, op);
  return out;
}

}  // namespace

Tensor amax(const Tensor& t, const DimList& dims, bool keepdim, const Tensor& out) {
  return extremum("amax", "amax()", MinMaxKind::Max, t, dims, keepdim, out);
}

Tensor amin(const Tensor& t, const DimList& dims, bool keepdim, const Tensor& out) {
  return extremum("amin", "amin()", MinMaxKind::Min, t, dims, keepdim, out);
}

Tensor max(const Tensor& t, const Tensor& out) {
  return extremum("max", "max()", MinMaxKind::Max, t, std::nullopt, false, out);
}

Tensor min(const Tensor& t, const Tensor& out) {
  return extremum("min", "min()", MinMaxKind::Min, t, std::nullopt, false, out);
}

TensorPair max(const Tensor& t, int64_t dim, bool keepdim, const Tensor& values,
               const Tensor& indices) {
  return extremum_dim("max", true, t, dim, keepdim, values, indices);
}

TensorPair min(const Tensor& t, int64_t dim, bool keepdim, const Tensor& values,
               const Tensor& indices) {
  return extremum_dim("min", false, t, dim, keepdim, values, indices);
}

TensorPair aminmax(const Tensor& t, std::optional<int64_t> dim, bool keepdim, const Tensor& min_out,
                   const Tensor& max_out) {
  const char* op = "aminmax";
  EMBER_CHECK_T(TypeError, !t.is_complex(), "[", op, "] aminmax not implemented for ",
                dtype_name(t.dtype()));
  ReduceDims rd = dim ? single_reduce_dim(t, *dim, op) : make_reduce_dims(t, std::nullopt, op);
  EMBER_CHECK(dim || t.numel() != 0, "[", op,
              "] aminmax(): cannot compute aminmax over an empty "
              "dimension as the operation has no identity.");
  check_reduction_nonempty(t, rd, op, "aminmax");
  check_same_out_dtype(t, min_out, op);
  check_same_out_dtype(t, max_out, op);
  Reduction r = make_reduction2(t, rd, keepdim, t.dtype(), t.dtype(), op, min_out, max_out);
  minmax_stub(t.device(), r.iter, MinMaxKind::MinMax);
  return finish_reduction2(r, rd, keepdim);
}

Tensor argmax(const Tensor& t, std::optional<int64_t> dim, bool keepdim, const Tensor& out) {
  return arg_extremum("argmax", true, t, dim, keepdim, out);
}

Tensor argmin(const Tensor& t, std::optional<int64_t> dim, bool keepdim, const Tensor& out) {
  return arg_extremum("argmin", false, t, dim, keepdim, out);
}

}  // namespace native
}  // namespace ember
