#include "ops/quantized/embedding.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "core/half.h"
#include "core/parallel.h"
#include "core/shape.h"
#include "kernels/quantized_stubs.h"
#include "ops/conversion.h"
#include "ops/creation.h"
#include "ops/nn/embedding.h"
#include "ops/quantized/quantize.h"
#include "ops/views.h"

namespace ember {
namespace native {
namespace {

// acc[d] (+)= (q[d] * scale + bias) * weight over one row (the SIMD kernel of the CPU level);
// max mode keeps the maximum.
template <int kBits, bool kMax>
inline void accumulate_row(const PackedEmbeddingWeight& w, int64_t row, float weight, float* acc) {
  embedding_row_stub(Device(), w.row(row) + PackedEmbeddingWeight::kRowHeader, kBits, w.dim,
                     w.scale(row) * weight, w.bias(row) * weight, acc, kMax);
}

// A float (rows, dim) stand-in with no memory (stride 0): the float embedding_bag checks take
// shapes from it.
Tensor shape_proxy(const PackedEmbeddingWeight& w) {
  return expand(zeros({1, 1}, TensorOptions(ScalarType::Float32)), {w.rows, w.dim});
}

}  // namespace

std::shared_ptr<PackedEmbeddingWeight> pack_embedding_weight(const Tensor& qweight) {
  const char* op = "quantized::embedding_bag_prepack";
  EMBER_CHECK_T(
      TypeError, qweight.dtype() == ScalarType::QUInt8 || qweight.dtype() == ScalarType::QUInt4x2,
      "[", op, "] expected a quint8 or quint4x2 weight, got ", dtype_name(qweight.dtype()));
  const Quantizer& q = quantizer_of(qweight, op);
  EMBER_CHECK(qweight.dim() == 2, "[", op, "] expected a 2-D weight (num_embeddings, dim), got ",
              shape_str(qweight.sizes()));
  EMBER_CHECK(q.float_qparams() && q.axis() == 0, "[", op,
              "] expected per-row quantization with float zero points "
              "(per_channel_affine_float_qparams along axis 0), got ",
              qscheme_name(q.scheme()),
              ": use float_qparams_weight_only_qconfig (or its _4bit form)");
  auto p = std::make_shared<PackedEmbeddingWeight>();
  p->weight = qweight;
  p->rows = qweight.size(0);
  p->dim = qweight.size(1);
  p->bits = qweight.dtype() == ScalarType::QUInt4x2 ? 4 : 8;
  p->row_bytes = p->bits == 8 ? p->dim : (p->dim + 1) / 2;
  p->row_stride = PackedEmbeddingWeight::kRowHeader + p->row_bytes;
  p->data.assign(static_cast<size_t>(p->rows * p->row_stride), 0);
  const Tensor values = contiguous(quantized_storage_view(qweight));
  const uint8_t* v = values.data<uint8_t>();
  for (int64_t r = 0; r < p->rows; ++r) {
    float scale = static_cast<float>(q.scales()[r]);
    float bias = static_cast<float>(-q.float_zero_points()[r] * q.scales()[r]);
    uint8_t* header = p->data.data() + r * p->row_stride;
    uint8_t* dst = header + PackedEmbeddingWeight::kRowHeader;
    if (p->bits == 8) {
      std::memcpy(dst, v + r * p->dim, p->dim);
    } else {
      scale = static_cast<float>(Half(scale));
      bias = static_cast<float>(Half(bias));
      for (int64_t d = 0; d < p->dim; ++d) {
        dst[d / 2] |= static_cast<uint8_t>(v[r * p->dim + d] << (4 * (d % 2)));
      }
    }
    std::memcpy(header, &scale, sizeof(float));
    std::memcpy(header + sizeof(float), &bias, sizeof(float));
  }
  return p;
}

Tensor embedding_quantized(const PackedEmbeddingWeight& w, const Tensor& indices) {
  const char* op = "quantized::embedding";
  EMBER_CHECK_T(TypeError,
                indices.dtype() == ScalarType::Int64 || indices.dtype() == ScalarType::Int32, "[",
                op, "] expected int64 or int32 indices, got ", dtype_name(indices.dtype()));
  const Tensor idx = contiguous(to(indices, ScalarType::Int64, indices.device()));
  DimVector shape(indices.sizes());
  shape.push_back(w.dim);
  Tensor out = empty(shape, TensorOptions(ScalarType::Float32));
  const int64_t n = idx.numel();
  const int64_t* ip = idx.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    EMBER_CHECK_T(IndexError, ip[i] >= 0 && ip[i] < w.rows, "[", op, "] index ", ip[i],
                  " is out of range for ", w.rows, " embeddings");
  }
  float* o = out.data<float>();
  parallel_for(0, n, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(w.dim, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t i = b; i < e; ++i) {
                   float* row = o + i * w.dim;
                   std::fill(row, row + w.dim, 0.f);
                   if (w.bits == 8) {
                     accumulate_row<8, false>(w, ip[i], 1.f, row);
                   } else {
                     accumulate_row<4, false>(w, ip[i], 1.f, row);
                   }
                 }
               });
  return out;
}

Tensor embedding_bag_quantized(const PackedEmbeddingWeight& w, const Tensor& indices,
                               const Tensor& offsets, int64_t mode,
                               const Tensor& per_sample_weights, bool include_last_offset,
                               std::optional<int64_t> padding_idx) {
  const Tensor proxy = shape_proxy(w);
  Tensor flat = indices, offs = offsets;
  if (indices.dim() == 2) {  // fixed-size bags, one per row
    EMBER_CHECK_T(ValueError, !offsets.defined(),
                  "[quantized::embedding_bag] offsets must be "
                  "None when the input is 2-D (each row is a bag)");
    const int64_t bags = indices.size(0), len = indices.size(1);
    flat = reshape(indices, {bags * len});
    offs = empty({bags}, TensorOptions(ScalarType::Int64));
    for (int64_t b = 0; b < bags; ++b) offs.data<int64_t>()[b] = b * len;
    include_last_offset = false;
  } else {
    EMBER_CHECK_T(ValueError, offsets.defined(),
                  "[quantized::embedding_bag] offsets are "
                  "required with a 1-D input");
  }
  Tensor psw = per_sample_weights;
  if (psw.defined()) psw = contiguous(to(reshape(psw, {-1}), ScalarType::Float32, psw.device()));
  const BagArgs args = embedding_bag_args(proxy, flat, mode, false, psw, padding_idx);
  const BagLayout l = embedding_bag_layout(proxy, flat, offs, include_last_offset);
  Tensor out = empty({l.num_bags, w.dim}, TensorOptions(ScalarType::Float32));
  const int64_t* idx = l.idx.data<int64_t>();
  const int64_t* starts = l.starts.data<int64_t>();
  const int64_t* ends = l.ends.data<int64_t>();
  const float* pw = psw.defined() ? psw.data<float>() : nullptr;
  float* o = out.data<float>();
  parallel_for(0, l.num_bags, 1, [&](int64_t b0, int64_t b1) {
    EmbeddingBagArgs bag;
    bag.table = w.data.data();
    bag.row_stride = w.row_stride;
    bag.header = PackedEmbeddingWeight::kRowHeader;
    bag.dim = w.dim;
    bag.bits = w.bits;
    bag.idx = idx;
    bag.per_sample_weights = pw;
    bag.max = args.mode == BagMode::Max;
    if (args.padding_idx >= 0) bag.padding_idx = args.padding_idx;
    // Bags lie in order: this range's lookups end with its last bag's.
    for (int64_t b = b0; b < b1; ++b) bag.prefetch_end = std::max(bag.prefetch_end, ends[b]);
    for (int64_t b = b0; b < b1; ++b) {
      bag.begin = starts[b];
      bag.end = ends[b];
      bag.out = o + b * w.dim;
      const int64_t count = embedding_bag_rows_stub(Device(), bag);
      if (count == 0) {
        std::fill(bag.out, bag.out + w.dim, 0.f);  // an empty bag is zeros, in every mode
      } else if (args.mode == BagMode::Mean) {
        const float inv = 1.f / static_cast<float>(count);
        for (int64_t d = 0; d < w.dim; ++d) bag.out[d] *= inv;
      }
    }
  });
  return out;
}

}  // namespace native
}  // namespace ember
