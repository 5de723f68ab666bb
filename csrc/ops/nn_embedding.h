// Embedding lookups: embedding (rows of a weight matrix picked by indices), its dense backward,
// embedding_renorm_ (max_norm) and embedding_bag (sums / means / maxima of bags of rows).
#pragma once
#include <cstdint>
#include <optional>
#include <tuple>

#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {

// ---- kernels ------------------------------------------------------------------------------------
// out (N, D) contiguous = weight[idx[i], :]; idx contiguous int64, already bounds-checked.
using EmbeddingGatherFn = void (*)(const Tensor& out, const Tensor& weight, const Tensor& idx);
EMBER_DECLARE_STUB(embedding_gather_stub, EmbeddingGatherFn);
// out (V, D) contiguous, zero-filled: out[target[k], :] += coef[k] * src[row[k], :] for every k
// with target[k] >= 0. row undefined: row[k] = k; coef undefined: 1. target / row int64, coef of
// out's dtype, all contiguous. Rows are split between threads, so no two threads add to one row.
using AccumulateRowsFn = void (*)(const Tensor& out, const Tensor& src, const Tensor& target,
                                  const Tensor& row, const Tensor& coef);
EMBER_DECLARE_STUB(accumulate_rows_stub, AccumulateRowsFn);
// Scales each listed row (distinct indices) of weight in place so that its p-norm is at most
// max_norm: row *= max_norm / (norm + 1e-7).
using EmbeddingRenormFn = void (*)(const Tensor& weight, const Tensor& rows, double max_norm,
                                   double norm_type);
EMBER_DECLARE_STUB(embedding_renorm_stub, EmbeddingRenormFn);

// embedding_bag forward: bags b of the contiguous int64 `idx` are [starts[b], ends[b]); entries
// equal to padding_idx are skipped. out (B, D), bag_size (B) and max_indices (B, D) contiguous.
enum class BagMode : int64_t { Sum = 0, Mean = 1, Max = 2 };
struct BagArgs {
  BagMode mode = BagMode::Sum;
  int64_t padding_idx = -1;  // -1: none
};
using EmbeddingBagFn = void (*)(const Tensor& out, const Tensor& bag_size,
                                const Tensor& max_indices, const Tensor& weight, const Tensor& idx,
                                const Tensor& starts, const Tensor& ends,
                                const Tensor& per_sample_weights, const BagArgs& args);
EMBER_DECLARE_STUB(embedding_bag_stub, EmbeddingBagFn);
// grad of max mode: out (V, D) zero-filled, out[max_indices[b, d], d] += grad[b, d] (entries -1
// skipped).
using EmbeddingBagMaxBackwardFn = void (*)(const Tensor& out, const Tensor& grad,
                                           const Tensor& max_indices);
EMBER_DECLARE_STUB(embedding_bag_max_backward_stub, EmbeddingBagMaxBackwardFn);

// ---- ops ----------------------------------------------------------------------------------------
// torch.embedding: weight (V, D), indices of any shape (int64 or int32) -> indices.shape + (D,).
// padding_idx (-1: none) only stops the gradient to that row.
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1,
                 bool scale_grad_by_freq = false, bool sparse = false);
// The weight's gradient (num_weights, D); not recorded (the node's formula picks it, see
// derivatives/nn_embedding.cpp).
Tensor embedding_dense_backward(const Tensor& grad, const Tensor& indices, int64_t num_weights,
                                int64_t padding_idx, bool scale_grad_by_freq);
// torch.embedding_renorm_: rows referenced by indices rescaled to norm <= max_norm (in place).
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
// The gradient of per_sample_weights (public ops: differentiable).
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
