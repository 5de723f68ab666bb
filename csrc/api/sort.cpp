// Public sort, topk, kthvalue (recording through autograd/derivatives/sort.cpp when the input
// requires grad) and msort, a composite of sort.
#include "api/sort.h"

#include "autograd/derivatives/join.h"
#include "autograd/record.h"
#include "ops/shape_util.h"

namespace ember {

std::tuple<Tensor, Tensor> sort(const Tensor& t, int64_t dim, bool descending, bool stable,
                                const Tensor& values_out, const Tensor& indices_out) {
  if (autograd::should_record(t)) {
    return derivatives::sort(t, dim, descending, stable, values_out, indices_out);
  }
  return native::sort(t, dim, descending, stable, values_out, indices_out);
}

Tensor msort(const Tensor& t, const Tensor& out) {
  // The values are sort's (its node); out= of a tensor that requires grad is refused up front,
  // as PyTorch, since the copy into out would not be differentiable.
  if (out.defined() && autograd::should_record(t)) autograd::check_out_arg(out, {t}, "msort");
  Tensor values = std::get<0>(ember::sort(t, 0, false, false));
  return native::finish_out(values, out, "msort");
}

std::tuple<Tensor, Tensor> topk(const Tensor& t, int64_t k, std::optional<int64_t> dim,
                                bool largest, bool sorted, const Tensor& values_out,
                                const Tensor& indices_out) {
  if (autograd::should_record(t)) {
    return derivatives::topk(t, k, dim, largest, sorted, values_out, indices_out);
  }
  return native::topk(t, k, dim, largest, sorted, values_out, indices_out);
}

std::tuple<Tensor, Tensor> kthvalue(const Tensor& t, int64_t k, std::optional<int64_t> dim,
                                    bool keepdim, const Tensor& values_out,
                                    const Tensor& indices_out) {
  if (autograd::should_record(t)) {
    return derivatives::kthvalue(t, k, dim, keepdim, values_out, indices_out);
  }
  return native::kthvalue(t, k, dim, keepdim, values_out, indices_out);
}

}  // namespace ember
