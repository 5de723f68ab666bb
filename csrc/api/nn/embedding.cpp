// Public embedding ops: the recording of embedding and embedding_bag, embedding_renorm_'s
// in-place check, and the per_sample_weights gradient written with public ops.
#include "api/nn/embedding.h"

#include <vector>

#include "api/compare.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/indexing.h"
#include "api/reduce.h"
#include "api/unary.h"
#include "autograd/derivatives/nn/embedding.h"
#include "autograd/variable.h"

namespace ember {

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx,
                 bool scale_grad_by_freq, bool sparse) {
  if (autograd::should_record(weight)) {
    return derivatives::embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse);
  }
  return native::embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse);
}

Tensor& embedding_renorm_(Tensor& weight, const Tensor& indices, double max_norm,
                          double norm_type) {
  autograd::check_inplace(weight);
  return native::embedding_renorm_(weight, indices, max_norm, norm_type);
}

std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(
    const Tensor& weight, const Tensor& indices, const Tensor& offsets, bool scale_grad_by_freq,
    int64_t mode, bool sparse, const Tensor& per_sample_weights, bool include_last_offset,
    std::optional<int64_t> padding_idx) {
  if (!autograd::should_record(weight, per_sample_weights)) {
    return native::embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
                                 per_sample_weights, include_last_offset, padding_idx);
  }
  // The node keeps the checked arguments and the bag layout.
  const BagArgs args =
      native::embedding_bag_args(weight, indices, mode, sparse, per_sample_weights, padding_idx);
  const BagLayout l = native::embedding_bag_layout(weight, indices, offsets, include_last_offset);
  return derivatives::embedding_bag(weight, l, per_sample_weights, args, scale_grad_by_freq);
}

Tensor embedding_bag_psw_grad(const Tensor& grad, const Tensor& weight, const BagLayout& l,
                              BagArgs args) {
  // d out[b] / d psw[k] = weight[idx[k]]: the dot product of grad[b] with that row.
  const Tensor rows = ember::clamp_min(l.offset2bag, Scalar(int64_t(0)));
  Tensor dots = ember::sum(
      ember::mul(ember::index_select(grad, 0, rows), ember::index_select(weight, 0, l.idx)),
      std::vector<int64_t>{1});
  Tensor valid = ember::logical_and(ember::ge(l.offset2bag, wrap_scalar(Scalar(int64_t(0)))),
                                    ember::ne(l.idx, wrap_scalar(Scalar(args.padding_idx))));
  return ember::mul(dots, valid);
}

}  // namespace ember
