// Weight-only quantized embeddings (PyTorch's quantized::embedding_byte / embedding_4bit and
// embedding_bag_byte_rowwise_offsets / embedding_bag_4bit_rowwise_offsets): each row of the
// table stored as 8-bit or 4-bit integers with its own scale and bias (row = q * scale + bias),
// dequantized while it is gathered or summed into a bag. See docs/design/quantization.md.
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "core/tensor.h"

namespace ember {
namespace native {

struct PackedEmbeddingWeight {
  Tensor weight;  // quint8 / quint4x2, per_channel_affine_float_qparams on axis 0: unpack()
  int64_t rows = 0, dim = 0;
  int bits = 8;
  int64_t row_bytes = 0;  // dim, or (dim + 1) / 2 for 4 bits (two values a byte, low first)
  // Each row is its float scale and bias (4-bit ones rounded to float16, as PyTorch's) followed
  // by its values, kRowHeader + row_bytes bytes: one lookup into a table larger than the caches
  // then misses on one or two cache lines, not three (values, scales, biases apart).
  static constexpr int64_t kRowHeader = 2 * sizeof(float);
  int64_t row_stride = 0;
  std::vector<uint8_t> data;  // rows * row_stride

  const uint8_t* row(int64_t r) const { return data.data() + r * row_stride; }
  float scale(int64_t r) const { return header(r, 0); }
  float bias(int64_t r) const { return header(r, 1); }

 private:
  float header(int64_t r, int i) const {
    float v;
    std::memcpy(&v, row(r) + i * sizeof(float), sizeof(float));
    return v;
  }
};

// Packs a (rows, dim) quint8 or quint4x2 weight quantized per row with float zero points.
std::shared_ptr<PackedEmbeddingWeight> pack_embedding_weight(const Tensor& qweight);

// float32 indices.shape + (dim,): the dequantized rows.
Tensor embedding_quantized(const PackedEmbeddingWeight& w, const Tensor& indices);

// float32 (bags, dim): per bag the sum (mode 0, rows scaled by per_sample_weights if given), mean
// (1) or maximum (2) of its dequantized rows; offsets as torch.nn.functional.embedding_bag (2-D
// indices make bags of their rows, offsets undefined); padding_idx rows are skipped.
Tensor embedding_bag_quantized(const PackedEmbeddingWeight& w, const Tensor& indices,
                               const Tensor& offsets, int64_t mode,
                               const Tensor& per_sample_weights, bool include_last_offset,
                               std::optional<int64_t> padding_idx);

}  // namespace native
}  // namespace ember
