// Scans: cumsum, cumprod, cummax, cummin, logcumsumexp.
#include "core/shape.h"
#include "dispatch/copy.h"
#include "dispatch/mem_overlap.h"
#include "dispatch/tensor_iterator.h"
#include "kernels/reduce_stubs.h"
#include "ops/creation.h"
#include "ops/reduce.h"
#include "ops/reduce_common.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(cumsum_stub, ScanFn);
EMBER_DEFINE_STUB(cumprod_stub, ScanFn);
EMBER_DEFINE_STUB(logcumsumexp_stub, ScanFn);
EMBER_DEFINE_STUB(cummaxmin_stub, CumMaxMinFn);

namespace {

// A 0-d tensor scans as a 1-element 1-d one.
Tensor as_1d(const Tensor& t) {
  return t.dim() == 0 ? reshape(t, {1}) : t;
}

// The tensor a scan writes: `out` (resized to the input's shape) or a new one.
Tensor scan_output(const Tensor& t, ScalarType dtype, const Tensor& out, const char* op) {
  if (!out.defined()) return empty_tensor(t.sizes(), dtype, t.device(), op);
  EMBER_CHECK(!out.storage()->read_only(), "[", op,
              "] cannot write to a tensor backed by a read-only NumPy array");
  check_reduction_out_dtype(out, dtype, op);
  resize_output(out, t.sizes(), op);
  assert_no_internal_overlap(out, op);
  return out;
}

using ScanStub = DispatchStub<ScanFn>;

Tensor cum_op(const char* op, const ScanStub& stub, const Tensor& t, int64_t dim, ScalarType dtype,
              const Tensor& out) {
  const int64_t d = wrap_dim(dim, t.dim(), op);
  ScalarType result = dtype;
  if (result == ScalarType::Undefined) {
    result = out.defined()                                   ? out.dtype()
             : is_integral(t.dtype(), /*include_bool=*/true) ? ScalarType::Int64
                                                             : t.dtype();
  }
  if (t.dim() == 0) {  // a 0-d scan is its (converted) value, for every dtype
    Tensor res = scan_output(t, result, out, op);
    copy_into(res, t, op);
    return res;
  }
  EMBER_CHECK_T(NotImplementedError, result != ScalarType::Bool, "[", op,
                "] not implemented for dtype bool");
  // As sum: integers scan into int64 directly; other dtype changes cast the input first.
  Tensor in = t;
  if (t.dtype() != result && !(result == ScalarType::Int64 && is_integral(t.dtype(), true))) {
    in = to_dtype(t, result);
  }
  Tensor res = scan_output(t, result, out, op);
  DimWalk walk;
  TensorIterator iter = make_dim_iterator({as_1d(res)}, as_1d(in), d, op, &walk);
  stub(t.device(), iter, walk);
  if (out.defined()) out.bump_version();
  return res;
}

TensorPair cum_extremum(const char* op, bool is_max, const Tensor& t, int64_t dim,
                        const Tensor& values, const Tensor& indices) {
  const int64_t d = wrap_dim(dim, t.dim(), op);
  Tensor v = scan_output(t, t.dtype(), values, op);
  Tensor i = scan_output(t, ScalarType::Int64, indices, op);
  if (t.numel() == 0) return {v, i};
  if (t.dim() == 0) {  // PyTorch copies a 0-d input without looking at its dtype
    copy_into(v, t, op);
    fill_(i, Scalar(int64_t(0)));
    return {v, i};
  }
  EMBER_CHECK_T(NotImplementedError, !t.is_complex(), "[", op, "] not implemented for dtype ",
                dtype_name(t.dtype()));
  DimWalk walk;
  TensorIterator iter = make_dim_iterator({as_1d(v), as_1d(i)}, as_1d(t), d, op, &walk);
  cummaxmin_stub(t.device(), iter, walk, is_max);
  if (values.defined()) values.bump_version();
  if (indices.defined()) indices.bump_version();
  return {v, i};
}

}  // namespace

Tensor cumsum(const Tensor& t, int64_t dim, ScalarType dtype, const Tensor& out) {
  return cum_op("cumsum", cumsum_stub, t, dim, dtype, out);
}

Tensor cumprod(const Tensor& t, int64_t dim, ScalarType dtype, const Tensor& out) {
  return cum_op("cumprod", cumprod_stub, t, dim, dtype, out);
}

Tensor logcumsumexp(const Tensor& t, int64_t dim, const Tensor& out) {
  const char* op = "logcumsumexp";
  EMBER_CHECK_T(NotImplementedError, t.is_floating_point() || t.is_complex(), "[", op,
                "] not implemented for dtype ", dtype_name(t.dtype()));
  return cum_op(op, logcumsumexp_stub, t, dim, t.dtype(), out);
}

TensorPair cummax(const Tensor& t, int64_t dim, const Tensor& values, const Tensor& indices) {
  return cum_extremum("cummax", true, t, dim, values, indices);
}

TensorPair cummin(const Tensor& t, int64_t dim, const Tensor& values, const Tensor& indices) {
  return cum_extremum("cummin", false, t, dim, values, indices);
}

}  // namespace native
}  // namespace ember
