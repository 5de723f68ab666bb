// Derivatives of the embedding ops (ops/nn/embedding.h).
#pragma once
#include <tuple>

#include "api/nn/embedding.h"
#include "core/tensor.h"

namespace ember {
namespace derivatives {

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx,
                 bool scale_grad_by_freq, bool sparse);
std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(const Tensor& weight,
                                                         const BagLayout& layout,
                                                         const Tensor& per_sample_weights,
                                                         BagArgs args, bool scale_grad_by_freq);

}  // namespace derivatives
}  // namespace ember
