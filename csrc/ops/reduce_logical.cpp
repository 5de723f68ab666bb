// all, any, count_nonzero.
#include "kernels/reduce_stubs.h"
#include "ops/creation.h"
#include "ops/reduce.h"
#include "ops/reduce_common.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(logical_stub, LogicalFn);

namespace {

Tensor logical(const char* op, bool is_all, const Tensor& t, const DimList& dims, bool keepdim,
               const Tensor& out) {
  // uint8 inputs give uint8 results (PyTorch keeps that for backward compatibility).
  ScalarType result = t.dtype() == ScalarType::UInt8 ? ScalarType::UInt8 : ScalarType::Bool;
  if (out.defined()) {
    EMBER_CHECK(out.dtype() == ScalarType::Bool || out.dtype() == ScalarType::UInt8, "[", op, "] ",
                op, " only supports bool tensor for result, got: ", dtype_name(out.dtype()));
    result = out.dtype();
  }
  ReduceDims rd = make_reduce_dims(t, dims, op, /*empty_means_all=*/false);
  Reduction r = make_reduction(t, rd, keepdim, result, op, out);
  logical_stub(t.device(), r.iter, is_all);
  return finish_reduction(r, rd, keepdim);
}

}  // namespace

Tensor all(const Tensor& t, const DimList& dims, bool keepdim, const Tensor& out) {
  return logical("all", true, t, dims, keepdim, out);
}

Tensor any(const Tensor& t, const DimList& dims, bool keepdim, const Tensor& out) {
  return logical("any", false, t, dims, keepdim, out);
}

Tensor count_nonzero(const Tensor& t, const DimList& dims, const Tensor& out) {
  const char* op = "count_nonzero";
  if (out.defined()) check_reduction_out_dtype(out, ScalarType::Int64, op);
  ReduceDims rd = make_reduce_dims(t, dims, op);
  Reduction r = make_reduction(t, rd, false, ScalarType::Int64, op, out);
  count_stub(t.device(), r.iter, CountKind::NonZero);
  return finish_reduction(r, rd, false);
}

}  // namespace native
}  // namespace ember
