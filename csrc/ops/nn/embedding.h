// Embedding lookups: embedding (rows of a weight matrix picked by indices), its dense backward,
// embedding_renorm_ (max_norm) and embedding_bag (sums / means / maxima of bags of rows).
#pragma once
#include <cstdint>
#include <optional>
#include <tuple>

#include "core/tensor.h"
#include "dispatch/stub.h"
#include "kernels/nn/embedding_stubs.h"

namespace ember {
namespace native {

// The kernel stubs, BagMode and BagArgs are in kernels/nn/embedding_stubs.h.

// ---- ops ----------------------------------------------------------------------------------------
// torch.embedding: weight (V, D), indices of any shape (int64 or int32) -> indices.shape + (D,).
// padding_idx (-1: none) only stops the gradient to that row.
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1,
                 bool scale_grad_by_freq = false, bool sparse = false);
// The weight's gradient (num_weights, D); not recorded (the node's formula picks it, see
// derivatives/nn/embedding.cpp).
Tensor embedding_dense_backward(const Tensor& grad, const Tensor& indices, int64_t num_weights,
                                int64_t padding_idx, bool scale_grad_by_freq);
// torch.embedding_renorm_: rows referenced by indices rescaled to norm <= max_norm (in place;
// the api layer checks that the weight may be modified in place).
Tensor& embedding_renorm_(Tensor& weight, const Tensor& indices, double max_norm, double norm_type);

// torch.embedding_bag -> (output, offset2bag, bag_size, max_indices).
std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(
    const Tensor& weight, const Tensor& indices, const Tensor& offsets, bool scale_grad_by_freq,
    int64_t mode, bool sparse, const Tensor& per_sample_weights, bool include_last_offset,
    std::optional<int64_t> padding_idx);

// Shared with the derivative: the bag layout of a call.
struct BagLayout {
  Tensor idx;         // int64 contiguous (N)
  Tensor starts;      // int64 (B)
  Tensor ends;        // int64 (B)
  Tensor offset2bag;  // int64 (N): the bag of each index
  int64_t num_bags = 0;
};
BagLayout embedding_bag_layout(const Tensor& weight, const Tensor& indices, const Tensor& offsets,
                               bool include_last_offset);
// The checked arguments of a call (mode, sparse, padding_idx, per_sample_weights).
BagArgs embedding_bag_args(const Tensor& weight, const Tensor& indices, int64_t mode, bool sparse,
                           const Tensor& per_sample_weights, std::optional<int64_t> padding_idx);
// The forward on a checked layout (not recorded).
std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag_forward(const Tensor& weight,
                                                                 const BagLayout& layout,
                                                                 const Tensor& per_sample_weights,
                                                                 BagArgs args);
// The factor each index's row of grad is added with into the weight's gradient (0 for padding
// and indices outside every bag, 1 / bag size for mean, 1 / frequency with scale_grad_by_freq),
// without per_sample_weights. A constant (no graph).
Tensor embedding_bag_coefficients(const BagLayout& layout, const Tensor& bag_size, BagArgs args,
                                  bool scale_grad_by_freq, int64_t num_weights, ScalarType dtype);
// The gradient of per_sample_weights (not recorded; api/nn/embedding.h has the differentiable
// form the double backward uses).
Tensor embedding_bag_psw_grad(const Tensor& grad, const Tensor& weight, const BagLayout& layout,
                              BagArgs args);
// (grad_weight, grad_per_sample_weights) of embedding_bag by the kernels; not recorded.
std::tuple<Tensor, Tensor> embedding_bag_backward(const Tensor& grad, const Tensor& weight,
                                                  const BagLayout& layout, const Tensor& bag_size,
                                                  const Tensor& max_indices,
                                                  const Tensor& per_sample_weights, BagArgs args,
                                                  bool scale_grad_by_freq, bool need_weight,
                                                  bool need_psw);

}  // namespace native
}  // namespace ember
