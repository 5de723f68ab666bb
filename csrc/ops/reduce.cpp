#include "ops/reduce.h"

#include "ops/creation.h"
#include "ops/reduce_common.h"
#include "ops/views.h"

namespace ember {

EMBER_DEFINE_STUB(sum_stub, ReduceFn);

Tensor sum(const Tensor& t, const std::optional<std::vector<int64_t>>& dims, bool keepdim,
           ScalarType dtype, const Tensor& out) {
  const char* op = "sum";
  ScalarType out_dtype = dtype != ScalarType::Undefined ? dtype
                         : is_integral(t.dtype(), /*include_bool=*/true) ? ScalarType::Int64
                                                                         : t.dtype();
  ReduceDims rd = make_reduce_dims(t, dims, op);
  // 16-bit floats accumulate in float32 and round once at the end.
  ScalarType acc = (out_dtype == ScalarType::Float16 || out_dtype == ScalarType::BFloat16)
                       ? ScalarType::Float32
                       : out_dtype;
  Tensor in = to_dtype(t, acc);
  if (acc != out_dtype) {
    Reduction r = make_reduction(in, rd, keepdim, acc, op);
    fill_fresh(r.result, Scalar(int64_t(0)));
    sum_stub(in.device(), r.iter);
    Tensor res = to_dtype(finish_reduction(r, rd, keepdim), out_dtype);
    if (out.defined()) {
      resize_output(out, res.sizes(), op);
      Tensor o = out;
      return copy_(o, res);
    }
    return res;
  }
  Reduction r = make_reduction(in, rd, keepdim, out_dtype, op, out);
  fill_fresh(r.result, Scalar(int64_t(0)));
  sum_stub(in.device(), r.iter);
  return finish_reduction(r, rd, keepdim, out);
}

}  // namespace ember
