// Public embedding ops: embedding and embedding_bag record their node when the weight (or
// per_sample_weights) requires grad, embedding_renorm_ makes the in-place check, and
// embedding_bag_psw_grad is written with public ops (api/nn/embedding.cpp); the rest are the
// native functions.
#pragma once
#include <cstdint>
#include <optional>
#include <tuple>

#include "ops/nn/embedding.h"

namespace ember {

using native::AccumulateRowsFn;
using native::BagArgs;
using native::BagLayout;
using native::BagMode;
using native::embedding_bag_args;
using native::embedding_bag_backward;
using native::embedding_bag_coefficients;
using native::embedding_bag_forward;
using native::embedding_bag_layout;
using native::embedding_dense_backward;
using native::EmbeddingBagFn;
using native::EmbeddingBagMaxBackwardFn;
using native::EmbeddingGatherFn;
using native::EmbeddingRenormFn;

// torch.embedding (see ops/nn/embedding.h).
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1,
                 bool scale_grad_by_freq = false, bool sparse = false);
// torch.embedding_renorm_ (in place).
Tensor& embedding_renorm_(Tensor& weight, const Tensor& indices, double max_norm, double norm_type);
// torch.embedding_bag -> (output, offset2bag, bag_size, max_indices).
std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(
    const Tensor& weight, const Tensor& indices, const Tensor& offsets, bool scale_grad_by_freq,
    int64_t mode, bool sparse, const Tensor& per_sample_weights, bool include_last_offset,
    std::optional<int64_t> padding_idx);
// The gradient of per_sample_weights with public ops (differentiable in grad and weight).
Tensor embedding_bag_psw_grad(const Tensor& grad, const Tensor& weight, const BagLayout& layout,
                              BagArgs args);

}  // namespace ember
