#include "ops/quantized/conv.h"

#include <algorithm>
#include <cstring>

#include "core/cpu_capability.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/shape.h"
#include "ops/conversion.h"
#include "ops/creation.h"
#include "ops/nn/activation.h"
#include "ops/nn/conv.h"
#include "ops/quantized/quantize.h"
#include "ops/views.h"

namespace ember {
namespace native {
namespace {

constexpr const char* kPrepack = "quantized::conv_prepack";
constexpr const char* kConv = "quantized::conv";

std::array<int64_t, 2> two(IntArrayRef v, int64_t dims, int64_t fill, const char* name) {
  return spatial_pair(v, dims, fill, kPrepack, name);
}

// Per output channel: x_scale * w_scale[c] and the bias (0 without one), for the direct kernels.
void channel_terms(const PackedConvWeight& w, float x_scale, std::vector<float>& scales,
                   std::vector<float>& bias) {
  const int64_t channels = static_cast<int64_t>(w.channel_scales.size());
  scales.resize(channels);
  bias.assign(channels, 0.f);
  for (int64_t c = 0; c < channels; ++c) {
    scales[c] = x_scale * w.channel_scales[c];
    if (w.bias.defined()) bias[c] = w.bias.data<float>()[c];
  }
}

// Pixels [p0, p1) of C channel planes (hw bytes apart) into channels-last pixels.
template <int C>
void interleave_pixels(const uint8_t* src, int64_t hw, uint8_t* dst, int64_t p0, int64_t p1) {
  for (int64_t p = p0; p < p1; ++p) {
    for (int ch = 0; ch < C; ++ch) dst[p * C + ch] = src[ch * hw + p];
  }
}

// float32 NCHW values of a per-tensor quantized (N, C, H, W) input: a channels-last one (what
// the quantized convolutions return) is dequantized and transposed in one blocked pass, so the
// float convolution gets the plain layout without a generic strided copy.
Tensor dequantize_nchw(const Tensor& x4, const Quantizer& q) {
  const Tensor ints = quantized_storage_view(x4);
  const Tensor nhwc = permute(ints, {0, 2, 3, 1});
  if (!nhwc.is_contiguous() || x4.is_contiguous()) return contiguous(dequantize(x4));
  const int64_t n = x4.size(0), c = x4.size(1), hw = x4.size(2) * x4.size(3);
  Tensor out = empty({n, c, x4.size(2), x4.size(3)}, TensorOptions(ScalarType::Float32));
  const uint8_t* src = nhwc.data<uint8_t>();
  float* dst = out.data<float>();
  const float scale = static_cast<float>(q.scale());
  const float zp = static_cast<float>(q.zero_point());
  constexpr int64_t kBlock = 64;  // pixels per work item: a cache-friendly tile of the transpose
  const int64_t blocks = (hw + kBlock - 1) / kBlock;
  parallel_for(0, n * blocks, std::max<int64_t>(1, kGrainSize / (kBlock * c)),
               [&](int64_t b0, int64_t b1) {
                 for (int64_t b = b0; b < b1; ++b) {
                   const int64_t img = b / blocks, p0 = (b % blocks) * kBlock;
                   const int64_t p1 = std::min(hw, p0 + kBlock);
                   const uint8_t* s = src + img * hw * c;
                   for (int64_t ch = 0; ch < c; ++ch) {
                     float* __restrict d = dst + (img * c + ch) * hw;
                     for (int64_t p = p0; p < p1; ++p) {
                       d[p] = (static_cast<float>(s[p * c + ch]) - zp) * scale;
                     }
                   }
                 }
               });
  return out;
}

struct Geometry {
  int64_t n, c, h, w, oh, ow, cg, og, taps;
};

// Copies n bytes; a short run (a few channels) as two overlapping words, not a call or a loop
// of byte stores.
inline void copy_bytes(uint8_t* dst, const uint8_t* src, int64_t n) {
  if (n >= 16) {
    std::memcpy(dst, src, n);
  } else if (n >= 8) {
    uint64_t head, tail;
    std::memcpy(&head, src, 8);
    std::memcpy(&tail, src + n - 8, 8);
    std::memcpy(dst, &head, 8);
    std::memcpy(dst + n - 8, &tail, 8);
  } else if (n >= 4) {
    uint32_t head, tail;
    std::memcpy(&head, src, 4);
    std::memcpy(&tail, src + n - 4, 4);
    std::memcpy(dst, &head, 4);
    std::memcpy(dst + n - 4, &tail, 4);
  } else {
    for (int64_t e = 0; e < n; ++e) dst[e] = src[e];
  }
}

struct UnfoldContext {
  const uint8_t* x;  // channels-last input
  const Geometry* g;
  const PackedConvWeight* w;
  int64_t group;
  uint8_t zero_point;
};

// Rows [r0, r1) of a group's unfolded input into a (rows `lda` apart): row (n, oh, ow) holds,
// tap by tap, the cg channels of the input pixel under that tap, or the zero point where the tap
// falls in the padding. A kernel row lying inside the input with dilation 1 is one run.
void unfold_rows(const void* context, int64_t r0, int64_t r1, uint8_t* a, int64_t lda) {
  const UnfoldContext& u = *static_cast<const UnfoldContext*>(context);
  const Geometry& g = *u.g;
  const PackedConvWeight& w = *u.w;
  const int64_t k = g.taps * g.cg, kw = w.kernel[1], run = kw * g.cg;
  const bool dense_rows = w.dilation[1] == 1 && g.cg == g.c;
  // (n, oh, ow) of row r0, then stepped along (no division per row).
  int64_t ow = r0 % g.ow, oh = (r0 / g.ow) % g.oh, n = r0 / (g.ow * g.oh);
  for (int64_t r = r0; r < r1; ++r, ++ow) {
    if (ow == g.ow) {
      ow = 0;
      if (++oh == g.oh) {
        oh = 0;
        ++n;
      }
    }
    uint8_t* row = a + (r - r0) * lda;
    const int64_t iw0 = ow * w.stride[1] - w.padding[1];
    for (int64_t i = 0; i < w.kernel[0]; ++i) {
      const int64_t ih = oh * w.stride[0] - w.padding[0] + i * w.dilation[0];
      uint8_t* dst = row + i * run;
      if (ih < 0 || ih >= g.h) {
        std::memset(dst, u.zero_point, run);
        continue;
      }
      const uint8_t* line = u.x + (n * g.h + ih) * g.w * g.c + u.group * g.cg;
      if (dense_rows && iw0 >= 0 && iw0 + kw <= g.w) {
        copy_bytes(dst, line + iw0 * g.c, run);
        continue;
      }
      for (int64_t j = 0; j < kw; ++j) {
        const int64_t iw = iw0 + j * w.dilation[1];
        if (iw < 0 || iw >= g.w) {
          std::memset(dst + j * g.cg, u.zero_point, g.cg);
        } else {
          copy_bytes(dst + j * g.cg, line + iw * g.c, g.cg);
        }
      }
    }
    for (int64_t e = k; e < lda; ++e) row[e] = 0;  // at most 3 bytes
  }
}

// Depthwise convolution straight from the channels-last input: per output pixel, each output
// channel sums (x - x_zp) * (w - w_zp) over its taps in int32 (exact), then the float epilogue
// requantizes. Channels are the inner loop, contiguous in input, weights and output.
void depthwise_rows(const uint8_t* x, const Geometry& g, const PackedConvWeight& w,
                    int32_t x_zero_point, float x_scale, const Int8Output& o, int64_t r0,
                    int64_t r1) {
  constexpr int64_t kBlock = 32;  // output pixels requantized per call of the SIMD quantizer
  const int64_t oc_n = w.weight.size(0), mult = oc_n / g.c;
  std::vector<int32_t> acc(oc_n);
  std::vector<int32_t> centered(g.c);
  std::vector<float> real(kBlock * oc_n), scale, bias;
  channel_terms(w, x_scale, scale, bias);
  // The requantization: the activation quantizer of the CPU level (quantize_per_tensor's
  // rounding), a block of output pixels at a time.
  QuantizeRowsArgs requant;
  requant.x = real.data();
  requant.k = requant.ldx = oc_n;
  requant.lda = o.ldo;
  requant.inv_scale = 1.f / static_cast<float>(o.scale);
  requant.zero_point = static_cast<int32_t>(o.zero_point);
  requant.qmax = 255;
  for (int64_t b0 = r0; b0 < r1; b0 += kBlock) {
    const int64_t b1 = std::min(r1, b0 + kBlock);
    for (int64_t r = b0; r < b1; ++r) {
      const int64_t ow = r % g.ow, oh = (r / g.ow) % g.oh, n = r / (g.ow * g.oh);
      int32_t* __restrict a = acc.data();
      std::fill(a, a + oc_n, 0);
      for (int64_t i = 0; i < w.kernel[0]; ++i) {
        const int64_t ih = oh * w.stride[0] - w.padding[0] + i * w.dilation[0];
        if (ih < 0 || ih >= g.h) continue;  // padding: x - x_zp = 0
        for (int64_t j = 0; j < w.kernel[1]; ++j) {
          const int64_t iw = ow * w.stride[1] - w.padding[1] + j * w.dilation[1];
          if (iw < 0 || iw >= g.w) continue;
          const uint8_t* __restrict src = x + ((n * g.h + ih) * g.w + iw) * g.c;
          const int32_t* __restrict wt = w.depthwise_taps.data() + (i * w.kernel[1] + j) * oc_n;
          if (mult == 1) {
            for (int64_t c = 0; c < oc_n; ++c) {
              a[c] += (int32_t(src[c]) - x_zero_point) * wt[c];
            }
          } else {
            for (int64_t c = 0; c < g.c; ++c) centered[c] = int32_t(src[c]) - x_zero_point;
            for (int64_t c = 0; c < oc_n; ++c) a[c] += centered[c / mult] * wt[c];
          }
        }
      }
      float* __restrict y = real.data() + (r - b0) * oc_n;
      const float* __restrict sc = scale.data();
      const float* __restrict bi = bias.data();
      for (int64_t c = 0; c < oc_n; ++c) y[c] = static_cast<float>(a[c]) * sc[c] + bi[c];
      if (o.relu) {
        for (int64_t c = 0; c < oc_n; ++c) y[c] = y[c] > 0.f ? y[c] : 0.f;
      }
    }
    requant.m = b1 - b0;
    requant.a = o.u8 + b0 * o.ldo;
    quantize_rows_u8_stub(Device(), requant);
  }
}

// Whether every w - w_zp of a qint8 weight is an int8 (always, for symmetric weights).
bool weights_fit_int8(const Quantizer& q) {
  for (int64_t zp : q.zero_points()) {
    if (zp != 0) return false;
  }
  return true;
}

// The grouped kernel's layouts (GroupedConvArgs): plain (C_out, group, taps), and dwords of
// four input channels from each output channel's group start rounded down to a multiple of 4.
void pack_grouped(const Tensor& qweight, const Quantizer& q, PackedConvWeight& p) {
  const Tensor ints = contiguous(int_repr(qweight));  // (C_out, group, *kernel), w_zp = 0
  const int8_t* w = ints.data<int8_t>();
  const int64_t c = qweight.size(0), group = qweight.size(1), taps = p.kernel[0] * p.kernel[1];
  const int64_t parts = (group + 3) / 4;
  p.grouped_weights.assign(w, w + c * group * taps);
  p.grouped_packed.resize(static_cast<size_t>(taps * parts * c));
  p.grouped_sums.resize(static_cast<size_t>(c));
  p.channel_scales.resize(c);
  for (int64_t oc = 0; oc < c; ++oc) {
    p.channel_scales[oc] = static_cast<float>(q.scales()[q.per_channel() ? oc : 0]);
  }
  grouped_conv_pack(w, c, group, c / p.groups, taps, p.grouped_packed.data(),
                    p.grouped_sums.data());
}

}  // namespace

std::array<int64_t, 2> spatial_pair(IntArrayRef v, int64_t dims, int64_t fill, const char* op,
                                    const char* name) {
  EMBER_CHECK_T(ValueError, static_cast<int64_t>(v.size()) == dims || v.size() == 1, "[", op, "] ",
                name, " needs 1 or ", dims, " values, got ", v.size());
  const int64_t a = v[0], b = v.size() == 1 ? v[0] : v[v.size() - 1];
  return dims == 1 ? std::array<int64_t, 2>{fill, a} : std::array<int64_t, 2>{a, b};
}

Tensor channels_last_ints(const Tensor& x4) {
  const Tensor ints = quantized_storage_view(x4);
  const Tensor nhwc = permute(ints, {0, 2, 3, 1});
  if (nhwc.is_contiguous() || !ints.is_contiguous()) return contiguous(nhwc);
  const int64_t n = ints.size(0), c = ints.size(1), hw = ints.size(2) * ints.size(3);
  Tensor out = empty({n, ints.size(2), ints.size(3), c}, TensorOptions(ScalarType::UInt8));
  const uint8_t* src = ints.data<uint8_t>();
  uint8_t* dst = out.data<uint8_t>();
  constexpr int64_t kBlock = 256;  // pixels per work item
  const int64_t blocks = (hw + kBlock - 1) / kBlock;
  parallel_for(0, n * blocks, std::max<int64_t>(1, kGrainSize / (kBlock * c)),
               [&](int64_t b0, int64_t b1) {
                 for (int64_t b = b0; b < b1; ++b) {
                   const int64_t img = b / blocks, p0 = (b % blocks) * kBlock;
                   const int64_t p1 = std::min(hw, p0 + kBlock);
                   const uint8_t* s = src + img * c * hw;
                   uint8_t* d = dst + img * hw * c;
                   switch (c) {  // image stems: a pixel's few channels unrolled
                     case 1:
                       std::memcpy(d + p0, s + p0, p1 - p0);
                       break;
                     case 2:
                       interleave_pixels<2>(s, hw, d, p0, p1);
                       break;
                     case 3:
                       interleave_pixels<3>(s, hw, d, p0, p1);
                       break;
                     case 4:
                       interleave_pixels<4>(s, hw, d, p0, p1);
                       break;
                     default:
                       for (int64_t ch = 0; ch < c; ++ch) {
                         const uint8_t* plane = s + ch * hw + p0;
                         uint8_t* column = d + p0 * c + ch;
                         for (int64_t p = 0; p < p1 - p0; ++p, column += c) *column = plane[p];
                       }
                   }
                 }
               });
  return out;
}

std::shared_ptr<PackedConvWeight> pack_conv_weight(const Tensor& qweight, const Tensor& bias,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, int64_t groups,
                                                   const std::string& kernel) {
  EMBER_CHECK_T(ValueError,
                kernel == "auto" || kernel == "int8" || kernel == "gemm" || kernel == "float", "[",
                kPrepack, "] kernel must be 'auto', 'int8', 'gemm' or 'float', got '", kernel, "'");
  EMBER_CHECK_T(TypeError, qweight.dtype() == ScalarType::QInt8, "[", kPrepack,
                "] expected a qint8 weight, got ", dtype_name(qweight.dtype()));
  const Quantizer& q = quantizer_of(qweight, kPrepack);
  EMBER_CHECK(qweight.dim() == 3 || qweight.dim() == 4, "[", kPrepack,
              "] expected a weight (C_out, C_in / groups, *kernel) of 1 or 2 spatial dims, got "
              "shape ",
              shape_str(qweight.sizes()));
  EMBER_CHECK(!q.per_channel() || q.axis() == 0, "[", kPrepack,
              "] per-channel weights must be quantized along axis 0 (the output channels), got "
              "axis ",
              q.axis());
  auto p = std::make_shared<PackedConvWeight>();
  p->spatial_dims = qweight.dim() - 2;
  const int64_t dims = p->spatial_dims;
  p->stride = two(stride, dims, 1, "stride");
  p->padding = two(padding, dims, 0, "padding");
  p->dilation = two(dilation, dims, 1, "dilation");
  p->kernel = dims == 1 ? std::array<int64_t, 2>{1, qweight.size(2)}
                        : std::array<int64_t, 2>{qweight.size(2), qweight.size(3)};
  for (int d = 0; d < 2; ++d) {
    EMBER_CHECK_T(ValueError, p->stride[d] > 0 && p->dilation[d] > 0 && p->padding[d] >= 0, "[",
                  kPrepack, "] stride and dilation must be positive and padding non-negative");
  }
  const int64_t out_channels = qweight.size(0);
  EMBER_CHECK_T(ValueError, groups > 0 && out_channels % groups == 0, "[", kPrepack, "] groups ",
                groups, " must be positive and divide the ", out_channels, " output channels");
  p->groups = groups;
  p->weight = qweight;
  if (bias.defined()) {
    EMBER_CHECK(bias.dim() == 1 && bias.size(0) == out_channels, "[", kPrepack, "] bias of shape ",
                shape_str(bias.sizes()), " for ", out_channels, " output channels");
    p->bias = contiguous(to(bias, ScalarType::Float32, bias.device()));
  }
  const int64_t cg = qweight.size(1), taps = p->kernel[0] * p->kernel[1];
  const int64_t og = out_channels / groups, depth = cg * taps;
  if (cg == 1 && groups > 1) {
    p->kernel_kind = PackedConvWeight::Kernel::kDepthwise;
    p->reason = "depthwise: direct int8 kernel";
  } else if (taps <= 64 && weights_fit_int8(q) && out_channels % 16 == 0 &&
             !(groups == 1 && taps == 1) &&
             ((cg == og && (cg == 2 || cg == 4 || cg == 8 || cg == 16) &&
               (cg <= 8 || cpu_capability() >= CpuCapability::Avx512)) ||
              (cg <= 4 && og % 16 == 0))) {
    // Narrow groups waste most of the GEMM's column panel and pay an unfolded copy of the input
    // per group; the direct kernel does neither. Groups of 16 need 16-lane vectors to beat the
    // GEMM. Stems (a few input channels) take it too: their unfolded rows are short copies.
    // Output channels in whole 16-lane vectors: the kernel's lanes left over are scalar.
    // A dense 1x1 layer stays on the GEMM, which reads its input in place.
    // (Measured: docs/design/quantization.md.)
    p->kernel_kind = PackedConvWeight::Kernel::kGrouped;
    p->reason = groups == 1 ? "direct int8 kernel (" + std::to_string(cg) + " input channels)"
                            : "grouped: direct int8 kernel (groups of " + std::to_string(cg) + ")";
  } else {
    p->reason = "int8 GEMM";
  }
  if (kernel == "gemm") {
    p->kernel_kind = PackedConvWeight::Kernel::kGemm;
    p->reason = "int8 GEMM: requested";
  }
  // "auto" never picks the float route today: in the measured shapes (bench_quantized_cnn.py
  // --shapes, docs/performance.md) the float convolution of the dequantized operands, with its
  // two extra passes, was never reliably faster than the int8 GEMM or depthwise kernel.
  if (kernel == "float") {
    p->kernel_kind = PackedConvWeight::Kernel::kFloat;
    p->reason = "float: requested";
  } else if (kernel == "int8" && p->kernel_kind == PackedConvWeight::Kernel::kFloat) {
    p->kernel_kind = cg == 1 && groups > 1 ? PackedConvWeight::Kernel::kDepthwise
                                           : PackedConvWeight::Kernel::kGemm;
    p->reason = "int8: requested";
  }
  if (p->kernel_kind == PackedConvWeight::Kernel::kFloat) {
    p->float_weight = dequantize(qweight);
    return p;
  }
  if (p->kernel_kind == PackedConvWeight::Kernel::kGrouped) {
    pack_grouped(qweight, q, *p);
    return p;
  }
  if (p->kernel_kind == PackedConvWeight::Kernel::kDepthwise) {
    const Tensor wi = contiguous(to(int_repr(qweight), ScalarType::Int32, Device()));
    const int32_t* wd = wi.data<int32_t>();
    p->depthwise_taps.resize(static_cast<size_t>(taps * out_channels));
    p->channel_scales.resize(out_channels);
    for (int64_t oc = 0; oc < out_channels; ++oc) {
      const size_t c = q.per_channel() ? oc : 0;
      p->channel_scales[oc] = static_cast<float>(q.scales()[c]);
      for (int64_t t = 0; t < taps; ++t) {
        p->depthwise_taps[t * out_channels + oc] =
            wd[oc * taps + t] - static_cast<int32_t>(q.zero_points()[c]);
      }
    }
    // Any partial sum of x * w plus the zero-point offset is bounded by 2 * 255 * sum |w|.
    const int64_t kh = p->kernel[0], kw = p->kernel[1];
    p->depthwise_taps_f.assign(p->depthwise_taps.begin(), p->depthwise_taps.end());
    p->depthwise_row_sums_f.assign(static_cast<size_t>(kh * out_channels), 0.f);
    int64_t largest_abs_sum = 0;
    for (int64_t oc = 0; oc < out_channels; ++oc) {
      int64_t abs_sum = 0;
      for (int64_t i = 0; i < kh; ++i) {
        for (int64_t j = 0; j < kw; ++j) {
          const int32_t tap = p->depthwise_taps[(i * kw + j) * out_channels + oc];
          p->depthwise_row_sums_f[i * out_channels + oc] += static_cast<float>(tap);
          abs_sum += std::abs(tap);
        }
      }
      largest_abs_sum = std::max(largest_abs_sum, abs_sum);
    }
    p->depthwise_float_exact = 2 * 255 * largest_abs_sum < (int64_t{1} << 24);
    return p;
  }
  // (C_out, kh, kw, C_in / groups): the unfolded input's column order.
  Tensor ints = int_repr(qweight);
  if (dims == 1) ints = unsqueeze(ints, 2);
  const Tensor ordered = contiguous(permute(ints, {0, 2, 3, 1}));
  for (int64_t g = 0; g < groups; ++g) {
    const Tensor wg = reshape(narrow(ordered, 0, g * og, og), {og, depth});
    std::vector<double> scales = q.scales();
    std::vector<int64_t> zero_points = q.zero_points();
    if (q.per_channel()) {
      scales.assign(q.scales().begin() + g * og, q.scales().begin() + (g + 1) * og);
      zero_points.assign(q.zero_points().begin() + g * og, q.zero_points().begin() + (g + 1) * og);
    }
    const Tensor bg = p->bias.defined() ? narrow(p->bias, 0, g * og, og) : Tensor();
    p->group_weights.push_back(pack_linear_weight(contiguous(wg), std::move(scales),
                                                  std::move(zero_points), q.per_channel(), bg));
  }
  return p;
}

Tensor conv_quantized(const Tensor& q_input, const PackedConvWeight& w, double out_scale,
                      int64_t out_zero_point, bool relu) {
  EMBER_CHECK_T(TypeError, q_input.dtype() == ScalarType::QUInt8, "[", kConv,
                "] expected a quint8 input (quantize it with a QuantStub or quantize_per_tensor), "
                "got ",
                dtype_name(q_input.dtype()));
  const Quantizer& iq = quantizer_of(q_input, kConv);
  EMBER_CHECK(!iq.per_channel(), "[", kConv, "] expected a per-tensor quantized input");
  const int64_t dims = w.spatial_dims;
  const bool batched = q_input.dim() == dims + 2;
  EMBER_CHECK(batched || q_input.dim() == dims + 1, "[", kConv, "] expected a ", dims + 2,
              "-D (batched) or ", dims + 1, "-D input for a ", dims, "-D convolution, got shape ",
              shape_str(q_input.sizes()));
  Tensor x = batched ? q_input : unsqueeze(q_input, 0);
  if (dims == 1) x = unsqueeze(x, 2);
  Geometry g;
  g.n = x.size(0);
  g.c = x.size(1);
  g.h = x.size(2);
  g.w = x.size(3);
  const int64_t out_channels = w.weight.size(0);
  g.cg = w.weight.size(1);
  g.og = out_channels / w.groups;
  g.taps = w.kernel[0] * w.kernel[1];
  EMBER_CHECK(g.c == g.cg * w.groups, "[", kConv, "] input of shape ", shape_str(q_input.sizes()),
              " has ", g.c, " channels; the weight of shape ", shape_str(w.weight.sizes()),
              " with groups=", w.groups, " expects ", g.cg * w.groups);
  std::array<int64_t, 2> out{};
  for (int d = 0; d < 2; ++d) {
    const int64_t in = d == 0 ? g.h : g.w;
    const int64_t extent = (w.kernel[d] - 1) * w.dilation[d] + 1;
    const int64_t span = in + 2 * w.padding[d] - extent;
    EMBER_CHECK(span >= 0, "[", kConv, "] input of shape ", shape_str(q_input.sizes()),
                " (padded) is smaller than the kernel of shape ", shape_str(w.weight.sizes()));
    out[d] = span / w.stride[d] + 1;
  }
  g.oh = out[0];
  g.ow = out[1];
  if (w.kernel_kind == PackedConvWeight::Kernel::kFloat) {
    // The float convolution of the dequantized operands, requantized: faster than the int8
    // GEMM for this geometry, equal to it up to float rounding.
    // As a 2-D convolution (a 1-D one over height 1), like the int8 path.
    const std::vector<int64_t> stride{w.stride[0], w.stride[1]},
        padding{w.padding[0], w.padding[1]}, dilation{w.dilation[0], w.dilation[1]};
    const Tensor weight = dims == 1 ? unsqueeze(w.float_weight, 2) : w.float_weight;
    Tensor real = convolution(dequantize_nchw(x, iq), weight, w.bias, stride, padding, dilation,
                              false, {0, 0}, w.groups);
    if (relu) real = activation(Activation::Relu, real, {}, Tensor());
    Tensor y = quantize_per_tensor(real, out_scale, out_zero_point, ScalarType::QUInt8);
    if (dims == 1) y = select(y, 2, 0);
    return batched ? y : select(y, 0, 0);
  }
  // The result: channels-last memory, (N, C_out, oh, ow) shape.
  Tensor result = empty_per_tensor_quantized({g.n, g.oh, g.ow, out_channels}, ScalarType::QUInt8,
                                             out_scale, out_zero_point, kConv);
  const int64_t rows = g.n * g.oh * g.ow;
  if (rows > 0 && out_channels > 0) {
    const Tensor xs = channels_last_ints(x);
    const uint8_t* xd = xs.data<uint8_t>();
    const uint8_t zero_point = static_cast<uint8_t>(iq.zero_point());
    QuantParams params;
    params.scale = static_cast<float>(iq.scale());
    params.zero_point = static_cast<int32_t>(iq.zero_point());
    // Not known for the whole input: without VNNI the GEMM checks each tile of rows for the
    // faster 7-bit product itself (a whole-input scan cost a quarter of a depthwise layer).
    const bool seven_bit = false;
    const int64_t k = g.taps * g.cg, lda = int8_gemm_padded_k(k);
    Int8Output o;
    o.ldo = out_channels;
    o.scale = out_scale;
    o.zero_point = out_zero_point;
    o.relu = relu;
    uint8_t* result_data = quantized_storage_view(result).data<uint8_t>();
    const bool pointwise = g.taps == 1 && w.groups == 1 && lda == g.c && w.stride[0] == 1 &&
                           w.stride[1] == 1 && w.padding[0] == 0 && w.padding[1] == 0;
    if (w.kernel_kind == PackedConvWeight::Kernel::kGrouped) {
      std::vector<float> scales, bias;
      channel_terms(w, params.scale, scales, bias);
      GroupedConvArgs a;
      a.x = xd;
      a.n = g.n;
      a.h = g.h;
      a.w = g.w;
      a.c_in = g.c;
      a.c_out = out_channels;
      a.oh = g.oh;
      a.ow = g.ow;
      for (int i = 0; i < 2; ++i) {
        a.kernel[i] = w.kernel[i];
        a.stride[i] = w.stride[i];
        a.padding[i] = w.padding[i];
        a.dilation[i] = w.dilation[i];
      }
      a.in_group = g.cg;
      a.out_group = g.og;
      a.x_zero_point = params.zero_point;
      a.weights = w.grouped_weights.data();
      a.packed = w.grouped_packed.data();
      a.weight_sums = w.grouped_sums.data();
      a.scales = scales.data();
      a.bias = bias.data();
      a.relu = relu;
      a.out_inv_scale = 1.f / static_cast<float>(out_scale);
      a.out_zero_point = static_cast<int32_t>(out_zero_point);
      a.out = result_data;
      a.ldo = out_channels;
      parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / (out_channels * g.taps * g.cg)),
                   [&](int64_t r0, int64_t r1) {
                     GroupedConvArgs part = a;
                     part.r0 = r0;
                     part.r1 = r1;
                     grouped_conv_u8_stub(Device(), part);
                   });
    } else if (w.kernel_kind == PackedConvWeight::Kernel::kDepthwise && out_channels == g.c) {
      // The SIMD kernel of the CPU level (channel multiplier 1, the common case).
      std::vector<float> scales, bias;
      channel_terms(w, params.scale, scales, bias);
      DepthwiseArgs d;
      d.x = xd;
      d.h = g.h;
      d.w = g.w;
      d.c = g.c;
      d.oh = g.oh;
      d.ow = g.ow;
      for (int i = 0; i < 2; ++i) {
        d.kernel[i] = w.kernel[i];
        d.stride[i] = w.stride[i];
        d.padding[i] = w.padding[i];
        d.dilation[i] = w.dilation[i];
      }
      d.x_zero_point = params.zero_point;
      d.taps = w.depthwise_taps.data();
      d.taps_f = w.depthwise_taps_f.data();
      d.row_sums_f = w.depthwise_row_sums_f.data();
      d.float_exact = w.depthwise_float_exact;
      d.scales = scales.data();
      d.bias = bias.data();
      d.relu = relu;
      d.out_inv_scale = 1.f / static_cast<float>(out_scale);
      d.out_zero_point = static_cast<int32_t>(out_zero_point);
      d.out = result_data;
      d.ldo = out_channels;
      parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / (out_channels * g.taps)),
                   [&](int64_t r0, int64_t r1) {
                     DepthwiseArgs part = d;
                     part.r0 = r0;
                     part.r1 = r1;
                     depthwise_u8_stub(Device(), part);
                   });
    } else if (w.kernel_kind == PackedConvWeight::Kernel::kDepthwise) {  // channel multipliers
      o.u8 = result_data;
      parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / (out_channels * g.taps)),
                   [&](int64_t r0, int64_t r1) {
                     depthwise_rows(xd, g, w, params.zero_point, params.scale, o, r0, r1);
                   });
    } else if (pointwise) {  // a 1x1 convolution: the channels-last input is the GEMM's A
      o.u8 = result_data;
      int8_linear_gemm({xd, rows, lda, seven_bit, params}, *w.group_weights[0], o);
    } else {  // im2col fused into the GEMM: each block of rows is unfolded where it is used
      for (int64_t group = 0; group < w.groups; ++group) {
        const UnfoldContext context{xd, &g, &w, group, zero_point};
        Int8Activations in;
        in.m = rows;
        in.lda = lda;
        in.seven_bit = seven_bit;
        in.params = params;
        in.fill = unfold_rows;
        in.fill_context = &context;
        o.u8 = result_data + group * g.og;
        int8_linear_gemm(in, *w.group_weights[group], o);
      }
    }
  }
  Tensor y = permute(result, {0, 3, 1, 2});
  if (dims == 1) y = select(y, 2, 0);
  return batched ? y : select(y, 0, 0);
}

}  // namespace native
}  // namespace ember
