// Sums, means, products, and the non-NaN count that the api layer's nanmean divides by.
#include "ops/reduce.h"

#include "kernels/reduce_stubs.h"
#include "ops/quantized/quantize.h"
#include "ops/reduce_common.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(sum_stub, ReduceFn);
EMBER_DEFINE_STUB(mean_stub, MeanFn);
EMBER_DEFINE_STUB(nansum_stub, ReduceFn);
EMBER_DEFINE_STUB(prod_stub, ReduceFn);
EMBER_DEFINE_STUB(count_stub, CountFn);

namespace {

// PyTorch's dtype for sum-like ops: the dtype argument, else out's dtype, else int64 for
// bool/integer inputs and the input's own dtype otherwise.
ScalarType sum_like_dtype(const Tensor& t, ScalarType dtype, const Tensor& out) {
  if (dtype != ScalarType::Undefined) return dtype;
  if (out.defined()) return out.dtype();
  return is_integral(t.dtype(), /*include_bool=*/true) ? ScalarType::Int64 : t.dtype();
}

// The kernels read bool/integer inputs into an int64 result directly; any other dtype change
// casts the input first ("dtype= casts the input before the reduction").
Tensor sum_like_input(const Tensor& t, ScalarType out_dtype) {
  if (t.dtype() == out_dtype) return t;
  if (out_dtype == ScalarType::Int64 && is_integral(t.dtype(), /*include_bool=*/true)) return t;
  return to_dtype(t, out_dtype);
}

using SumLikeStub = DispatchStub<ReduceFn>;

Tensor sum_like(const char* op, const SumLikeStub& stub, const Tensor& t, const DimList& dims,
                bool keepdim, ScalarType dtype, const Tensor& out) {
  const ScalarType out_dtype = sum_like_dtype(t, dtype, out);
  ReduceDims rd = make_reduce_dims(t, dims, op);
  Tensor in = sum_like_input(t, out_dtype);
  Reduction r = make_reduction(in, rd, keepdim, out_dtype, op, out);
  stub(in.device(), r.iter);
  return finish_reduction(r, rd, keepdim);
}

}  // namespace

Tensor sum(const Tensor& t, const DimList& dims, bool keepdim, ScalarType dtype,
           const Tensor& out) {
  return sum_like("sum", sum_stub, t, dims, keepdim, dtype, out);
}

Tensor nansum(const Tensor& t, const DimList& dims, bool keepdim, ScalarType dtype,
              const Tensor& out) {
  // Integer inputs take sum's path whatever dtype says, as in PyTorch.
  EMBER_CHECK_T(NotImplementedError,
                !t.is_complex() && !(t.is_floating_point() && is_complex(dtype)),
                "[nansum] nansum does not support complex inputs, got ",
                dtype_name(is_complex(dtype) ? dtype : t.dtype()));
  return sum_like("nansum", nansum_stub, t, dims, keepdim, dtype, out);
}

Tensor mean(const Tensor& t, const DimList& dims, bool keepdim, ScalarType dtype,
            const Tensor& out) {
  const char* op = "mean";
  if (is_quantized(t.dtype()) && dtype == ScalarType::Undefined && !out.defined()) {
    return quantized_via_float(t, op, [&](const Tensor& real) {
      return mean(real, dims, keepdim, ScalarType::Undefined, Tensor());
    });
  }
  if (dtype != ScalarType::Undefined) {
    EMBER_CHECK_T(NotImplementedError, is_floating(dtype) || is_complex(dtype), "[", op,
                  "] could not infer output dtype. Optional dtype must be either a floating "
                  "point or complex dtype. Got: ",
                  dtype_name(dtype));
  } else {
    EMBER_CHECK_T(NotImplementedError, t.is_floating_point() || t.is_complex(), "[", op,
                  "] could not infer output dtype. Input dtype must be either a floating point "
                  "or complex dtype. Got: ",
                  dtype_name(t.dtype()));
  }
  ScalarType out_dtype = dtype;
  if (out_dtype == ScalarType::Undefined) {
    out_dtype = out.defined() && (is_floating(out.dtype()) || is_complex(out.dtype())) ? out.dtype()
                                                                                       : t.dtype();
  }
  ReduceDims rd = make_reduce_dims(t, dims, op);
  Tensor in = to_dtype(t, out_dtype);
  Reduction r = make_reduction(in, rd, keepdim, out_dtype, op, out);
  mean_stub(in.device(), r.iter, rd.reduced_numel(t.sizes()));
  return finish_reduction(r, rd, keepdim);
}

Tensor count_non_nan(const Tensor& t, const DimList& dims, bool keepdim, const char* op) {
  ReduceDims rd = make_reduce_dims(t, dims, op);
  Reduction r = make_reduction(t, rd, keepdim, ScalarType::Int64, op);
  count_stub(t.device(), r.iter, CountKind::NonNan);
  return finish_reduction(r, rd, keepdim);
}

Tensor prod(const Tensor& t, std::optional<int64_t> dim, bool keepdim, ScalarType dtype,
            const Tensor& out) {
  const char* op = "prod";
  DimList dims;
  if (dim) dims = std::vector<int64_t>{*dim};
  return sum_like(op, prod_stub, t, dims, keepdim && dim.has_value(), dtype, out);
}

}  // namespace native
}  // namespace ember
