// The scalar reference twins of the int8 kernels (kernels/quantized_stubs.h): plain loops over
// the unpacked operands, the oracle the tests hold every level's kernel to. The packing here is
// also what the kernels use (a one-time copy per module).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "kernels/quantized_stubs.h"

namespace ember {
namespace native {

void int8_pack_weights_reference(const int8_t* w, int64_t n, int64_t k, int64_t ldw, int64_t panel,
                                 PackedInt8Weights& out) {
  out.n = n;
  out.k = k;
  out.panel = panel;
  out.k_padded = int8_gemm_padded_k(k);
  out.n_padded = (n + panel - 1) / panel * panel;
  out.level = -1;
  out.data.assign(out.n_padded * out.k_padded, 0);
  out.column_sums.assign(n, 0);
  for (int64_t j = 0; j < n; ++j) {
    const int64_t p = j / panel, c = j % panel;
    int8_t* panel_data = out.data.data() + p * panel * out.k_padded;
    int32_t sum = 0;
    for (int64_t e = 0; e < k; ++e) {
      const int8_t v = w[j * ldw + e];
      panel_data[(e / 4) * panel * 4 + c * 4 + e % 4] = v;
      sum += v;
    }
    out.column_sums[j] = sum;
  }
}

void int8_gemm_reference(const Int8GemmArgs& p, const int8_t* w, int64_t ldw) {
  const int64_t n = p.w->n, k = p.w->k;
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      int32_t acc = 0;
      for (int64_t e = 0; e < k; ++e) acc += int32_t(p.a[i * p.lda + e]) * int32_t(w[j * ldw + e]);
      if (p.raw) {
        p.raw[i * p.ldo + j] = acc;
        continue;
      }
      const int32_t zw = p.w_zero_points ? p.w_zero_points[j] : 0;
      int32_t v = acc - p.a_zero_point * p.w->column_sums[j] + int32_t(k) * p.a_zero_point * zw;
      if (zw != 0) v -= zw * p.a_row_sums[i];
      // The same float operations, in the same order, as the kernels' epilogue.
      const float scale = p.a_scale * p.w_scales[j];
      float y = static_cast<float>(v) * scale + (p.bias ? p.bias[j] : 0.f);
      if (p.relu) y = std::max(y, 0.f);
      if (p.out_u8) {
        const float q = std::nearbyint(y * p.out_inv_scale) + float(p.out_zero_point);
        p.out_u8[i * p.ldo + j] = static_cast<uint8_t>(q > 0.f ? std::min(q, 255.f) : 0.f);
      } else {
        p.out[i * p.ldo + j] = y;
      }
    }
  }
}

void quantize_rows_u8_reference(const QuantizeRowsArgs& q) {
  for (int64_t r = 0; r < q.m; ++r) {
    for (int64_t e = 0; e < q.lda; ++e) {
      if (e >= q.k) {
        q.a[r * q.lda + e] = 0;
        continue;
      }
      const float v = std::nearbyint(q.x[r * q.ldx + e] * q.inv_scale) + float(q.zero_point);
      // NaN compares false both ways and lands on 0, as the kernels' max(v, 0).
      const float c = v > 0.f ? std::min(v, float(q.qmax)) : 0.f;
      q.a[r * q.lda + e] = static_cast<uint8_t>(c);
    }
  }
}

void quantized_binary_u8_reference(const QuantizedBinaryArgs& p) {
  for (int64_t i = 0; i < p.n; ++i) {
    const float a = (float(p.a[i]) - float(p.a_zero_point)) * p.a_scale;
    const float b = (float(p.b[i]) - float(p.b_zero_point)) * p.b_scale;
    float y = p.op == QuantizedBinaryOp::kAdd ? a + b : a * b;
    if (p.relu) y = std::max(y, 0.f);
    const float q = std::nearbyint(y * p.out_inv_scale) + float(p.out_zero_point);
    p.out[i] = static_cast<uint8_t>(q > 0.f ? std::min(q, 255.f) : 0.f);
  }
}

void depthwise_u8_reference(const DepthwiseArgs& p) {
  for (int64_t r = p.r0; r < p.r1; ++r) {
    const int64_t ow = r % p.ow, oh = (r / p.ow) % p.oh, n = r / (p.ow * p.oh);
    for (int64_t c = 0; c < p.c; ++c) {
      int32_t acc = 0;
      for (int64_t i = 0; i < p.kernel[0]; ++i) {
        const int64_t ih = oh * p.stride[0] - p.padding[0] + i * p.dilation[0];
        for (int64_t j = 0; j < p.kernel[1]; ++j) {
          const int64_t iw = ow * p.stride[1] - p.padding[1] + j * p.dilation[1];
          if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) continue;
          const int32_t x = p.x[((n * p.h + ih) * p.w + iw) * p.c + c];
          acc += (x - p.x_zero_point) * p.taps[(i * p.kernel[1] + j) * p.c + c];
        }
      }
      float y = static_cast<float>(acc) * p.scales[c] + p.bias[c];
      if (p.relu) y = std::max(y, 0.f);
      const float q = std::nearbyint(y * p.out_inv_scale) + float(p.out_zero_point);
      p.out[r * p.ldo + c] = static_cast<uint8_t>(q > 0.f ? std::min(q, 255.f) : 0.f);
    }
  }
}

void grouped_conv_pack(const int8_t* w, int64_t c_out, int64_t in_group, int64_t out_group,
                       int64_t taps, int32_t* packed, int32_t* sums) {
  const int64_t parts = (in_group + 3) / 4;
  for (int64_t oc = 0; oc < c_out; ++oc) {
    const int64_t start = oc / out_group * in_group;
    const int64_t window = in_group == out_group ? start / 4 * 4 : start;
    sums[oc] = 0;
    for (int64_t t = 0; t < taps; ++t) {
      for (int64_t part = 0; part < parts; ++part) {
        uint8_t bytes[4] = {0, 0, 0, 0};
        for (int64_t s = 0; s < 4; ++s) {
          const int64_t ci = window + 4 * part + s - start;
          if (ci >= 0 && ci < in_group) {
            const int8_t v = w[(oc * in_group + ci) * taps + t];
            bytes[s] = static_cast<uint8_t>(v);
            sums[oc] += v;
          }
        }
        std::memcpy(&packed[(t * parts + part) * c_out + oc], bytes, 4);
      }
    }
  }
}

void tap_sums_u8_reference(const TapSumsArgs& p) {
  for (int64_t x = 0; x < p.pixels; ++x) {
    for (int64_t k = 0; k < p.channels; ++k) {
      float sum = 0.f;
      for (int64_t e = p.tap_begin[x]; e < p.tap_begin[x + 1]; ++e) sum += p.taps[e][p.offset + k];
      const float y = sum * p.scale + (p.bias ? p.bias[k] : 0.f);
      const float q = std::nearbyint(y * p.inv_scale) + float(p.zero_point);
      p.out[x * p.ldo + k] = static_cast<uint8_t>(q > 0.f ? std::min(q, 255.f) : 0.f);
    }
  }
}

void grouped_conv_u8_reference(const GroupedConvArgs& p) {
  const int64_t taps = p.kernel[0] * p.kernel[1];
  for (int64_t r = p.r0; r < p.r1; ++r) {
    const int64_t ow = r % p.ow, oh = (r / p.ow) % p.oh, n = r / (p.ow * p.oh);
    for (int64_t oc = 0; oc < p.c_out; ++oc) {
      const int64_t in_start = oc / p.out_group * p.in_group;
      int32_t acc = 0;
      for (int64_t i = 0; i < p.kernel[0]; ++i) {
        const int64_t ih = oh * p.stride[0] - p.padding[0] + i * p.dilation[0];
        for (int64_t j = 0; j < p.kernel[1]; ++j) {
          const int64_t iw = ow * p.stride[1] - p.padding[1] + j * p.dilation[1];
          if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) continue;
          const uint8_t* x = p.x + ((n * p.h + ih) * p.w + iw) * p.c_in + in_start;
          for (int64_t ci = 0; ci < p.in_group; ++ci) {
            acc += (int32_t(x[ci]) - p.x_zero_point) *
                   p.weights[(oc * p.in_group + ci) * taps + i * p.kernel[1] + j];
          }
        }
      }
      float y = static_cast<float>(acc) * p.scales[oc] + p.bias[oc];
      if (p.relu) y = std::max(y, 0.f);
      const float q = std::nearbyint(y * p.out_inv_scale) + float(p.out_zero_point);
      p.out[r * p.ldo + oc] = static_cast<uint8_t>(q > 0.f ? std::min(q, 255.f) : 0.f);
    }
  }
}

int64_t embedding_bag_rows_reference(const EmbeddingBagArgs& p) {
  for (int64_t d = 0; d < p.dim; ++d) {
    p.out[d] = p.max ? -std::numeric_limits<float>::infinity() : 0.f;
  }
  int64_t count = 0;
  for (int64_t i = p.begin; i < p.end; ++i) {
    if (p.padding_idx && p.idx[i] == *p.padding_idx) continue;
    ++count;
    const uint8_t* row = p.table + p.idx[i] * p.row_stride;
    float scale, bias;
    std::memcpy(&scale, row, sizeof(float));
    std::memcpy(&bias, row + sizeof(float), sizeof(float));
    const float weight = p.per_sample_weights ? p.per_sample_weights[i] : 1.f;
    scale *= weight;
    bias *= weight;
    for (int64_t d = 0; d < p.dim; ++d) {
      const uint8_t* q = row + p.header;
      const int value = p.bits == 4 ? (q[d / 2] >> (4 * (d % 2))) & 0xF : q[d];
      const float y = static_cast<float>(value) * scale + bias;
      p.out[d] = p.max ? std::max(p.out[d], y) : p.out[d] + y;
    }
  }
  return count;
}

}  // namespace native
}  // namespace ember
