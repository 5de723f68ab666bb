// Kernel stubs of the embedding ops (ops/nn/embedding.h includes this header; the ops are
// ops/nn/embedding.cpp, the kernels kernels/cpu/nn/embedding_kernels.cpp), with the embedding_bag
// parameters they take.
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {

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

}  // namespace native
}  // namespace ember
