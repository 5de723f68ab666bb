#include "ops/quantized/conv_transpose.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "core/error.h"
#include "core/parallel.h"
#include "core/shape.h"
#include "kernels/quantized_stubs.h"
#include "ops/conversion.h"
#include "ops/creation.h"
#include "ops/quantized/conv.h"
#include "ops/quantized/quantize.h"
#include "ops/views.h"

namespace ember {
namespace native {
namespace {

constexpr const char* kPrepack = "quantized::conv_transpose_prepack";
constexpr const char* kOp = "quantized::conv_transpose";

std::array<int64_t, 2> two(IntArrayRef v, int64_t dims, int64_t fill, const char* name) {
  return spatial_pair(v, dims, fill, kPrepack, name);
}

// Rows [i0, i1) of one group's GEMM input: each input pixel's channels of the group, zero-padded
// to `lda` (the GEMM reads four bytes at a time).
struct GroupRows {
  const uint8_t* x;  // channels-last input
  int64_t c, group_start, width;
};

void fill_group_rows(const void* context, int64_t i0, int64_t i1, uint8_t* a, int64_t lda) {
  const GroupRows& g = *static_cast<const GroupRows*>(context);
  for (int64_t r = i0; r < i1; ++r) {
    uint8_t* row = a + (r - i0) * lda;
    std::memcpy(row, g.x + r * g.c + g.group_start, g.width);
    std::memset(row + g.width, 0, lda - g.width);
  }
}

}  // namespace

std::shared_ptr<PackedConvTransposeWeight> pack_conv_transpose_weight(
    const Tensor& qweight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
    IntArrayRef output_padding, IntArrayRef dilation, int64_t groups) {
  EMBER_CHECK_T(TypeError, qweight.dtype() == ScalarType::QInt8, "[", kPrepack,
                "] expected a qint8 weight, got ", dtype_name(qweight.dtype()));
  const Quantizer& q = quantizer_of(qweight, kPrepack);
  EMBER_CHECK(!q.per_channel(), "[", kPrepack,
              "] per-channel weights are not supported for transposed convolution (nor by "
              "PyTorch): quantize the weight per tensor (default_weight_observer; "
              "get_default_qconfig_mapping does so for ConvTranspose)");
  EMBER_CHECK(qweight.dim() == 3 || qweight.dim() == 4, "[", kPrepack,
              "] expected a weight (C_in, C_out / groups, *kernel) of 1 or 2 spatial dims, got "
              "shape ",
              shape_str(qweight.sizes()));
  auto p = std::make_shared<PackedConvTransposeWeight>();
  p->spatial_dims = qweight.dim() - 2;
  const int64_t dims = p->spatial_dims;
  p->stride = two(stride, dims, 1, "stride");
  p->padding = two(padding, dims, 0, "padding");
  p->output_padding = two(output_padding, dims, 0, "output_padding");
  p->dilation = two(dilation, dims, 1, "dilation");
  p->kernel = dims == 1 ? std::array<int64_t, 2>{1, qweight.size(2)}
                        : std::array<int64_t, 2>{qweight.size(2), qweight.size(3)};
  for (int d = 0; d < 2; ++d) {
    EMBER_CHECK_T(
        ValueError,
        p->stride[d] > 0 && p->dilation[d] > 0 && p->padding[d] >= 0 && p->output_padding[d] >= 0,
        "[", kPrepack,
        "] stride and dilation must be positive, padding and output_padding "
        "non-negative");
    EMBER_CHECK_T(ValueError,
                  p->output_padding[d] < p->stride[d] || p->output_padding[d] < p->dilation[d], "[",
                  kPrepack, "] output_padding ", p->output_padding[d],
                  " must be smaller than either stride or dilation");
  }
  const int64_t in_channels = qweight.size(0);
  EMBER_CHECK_T(ValueError, groups > 0 && in_channels % groups == 0, "[", kPrepack, "] groups ",
                groups, " must be positive and divide the ", in_channels, " input channels");
  p->groups = groups;
  p->weight = qweight;
  const int64_t cg = in_channels / groups, og = qweight.size(1);
  const int64_t taps = p->kernel[0] * p->kernel[1];
  p->out_channels = og * groups;
  if (bias.defined()) {
    EMBER_CHECK(bias.dim() == 1 && bias.size(0) == p->out_channels, "[", kPrepack,
                "] bias of shape ", shape_str(bias.sizes()), " for ", p->out_channels,
                " output channels");
    p->bias = contiguous(to(bias, ScalarType::Float32, bias.device()));
  }
  p->weight_scale = q.scale();
  // (C_in, og, kh, kw) -> per group (kh, kw, og) rows of cg columns.
  Tensor ints = int_repr(qweight);
  if (dims == 1) ints = unsqueeze(ints, 2);
  const Tensor ordered = contiguous(permute(ints, {2, 3, 1, 0}));  // (kh, kw, og, C_in)
  for (int64_t g = 0; g < groups; ++g) {
    const Tensor wg = contiguous(reshape(narrow(ordered, 3, g * cg, cg), {taps * og, cg}));
    p->group_weights.push_back(pack_linear_weight(wg, {1.0}, {q.zero_point()}, false, Tensor()));
  }
  return p;
}

Tensor conv_transpose_quantized(const Tensor& q_input, const PackedConvTransposeWeight& w,
                                double out_scale, int64_t out_zero_point) {
  EMBER_CHECK_T(TypeError, q_input.dtype() == ScalarType::QUInt8, "[", kOp,
                "] expected a quint8 input (quantize it with a QuantStub or quantize_per_tensor), "
                "got ",
                dtype_name(q_input.dtype()));
  const Quantizer& iq = quantizer_of(q_input, kOp);
  EMBER_CHECK(!iq.per_channel(), "[", kOp, "] expected a per-tensor quantized input");
  EMBER_CHECK_T(ValueError, out_scale > 0 && std::isfinite(out_scale), "[", kOp,
                "] output scale must be positive and finite, got ", out_scale);
  EMBER_CHECK_T(ValueError, out_zero_point >= 0 && out_zero_point <= 255, "[", kOp,
                "] output zero_point ", out_zero_point, " is outside quint8's [0, 255]");
  const int64_t dims = w.spatial_dims;
  const bool batched = q_input.dim() == dims + 2;
  EMBER_CHECK(batched || q_input.dim() == dims + 1, "[", kOp, "] expected a ", dims + 2,
              "-D (batched) or ", dims + 1, "-D input for a ", dims,
              "-D transposed convolution, got shape ", shape_str(q_input.sizes()));
  Tensor x = batched ? q_input : unsqueeze(q_input, 0);
  if (dims == 1) x = unsqueeze(x, 2);
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), wd = x.size(3);
  const int64_t in_channels = w.weight.size(0);
  EMBER_CHECK(c == in_channels, "[", kOp, "] input of shape ", shape_str(q_input.sizes()), " has ",
              c, " channels; the weight of shape ", shape_str(w.weight.sizes()), " expects ",
              in_channels);
  std::array<int64_t, 2> out{};
  for (int d = 0; d < 2; ++d) {
    const int64_t in = d == 0 ? h : wd;
    out[d] = (in - 1) * w.stride[d] - 2 * w.padding[d] + w.dilation[d] * (w.kernel[d] - 1) +
             w.output_padding[d] + 1;
    EMBER_CHECK(out[d] > 0, "[", kOp, "] input of shape ", shape_str(q_input.sizes()),
                " gives an empty output (size ", out[d], ") for this kernel, stride and padding");
  }
  const int64_t oh = out[0], ow = out[1], co = w.out_channels;
  const int64_t cg = c / w.groups, og = co / w.groups, taps = w.kernel[0] * w.kernel[1];
  Tensor result = empty_per_tensor_quantized({n, oh, ow, co}, ScalarType::QUInt8, out_scale,
                                             out_zero_point, kOp);
  uint8_t* result_data = quantized_storage_view(result).data<uint8_t>();
  if (n > 0 && co > 0) {
    // Exact integer sums per output element (double holds them exactly), then one requantize.
    // Each image's sums are zeroed by the thread that first scatters into them.
    const int64_t image_sums = oh * ow * co, image_rows = h * wd;
    std::unique_ptr<double[]> sums(new double[static_cast<size_t>(n * image_sums)]);
    const Tensor xs = channels_last_ints(x);
    const uint8_t* xd = xs.data<uint8_t>();
    const int64_t lda = int8_gemm_padded_k(cg), cols = taps * og;
    QuantParams params;  // scale 1: the GEMM's float output is the exact integer sum
    params.zero_point = static_cast<int32_t>(iq.zero_point());
    // Input rows a block at a time so the columns (cols floats an input pixel) stay a few MB:
    // whole images when they fit, scattered in parallel (no two threads write one image), else
    // parts of one image.
    constexpr int64_t kColumnBudget = int64_t{1} << 20;  // floats
    const int64_t image_cols = std::max<int64_t>(cols * image_rows, 1);
    const int64_t block_rows =
        image_cols <= kColumnBudget
            ? std::min(n, kColumnBudget / image_cols) * image_rows
            : std::max<int64_t>(1, kColumnBudget / std::max<int64_t>(cols, 1));
    const int64_t rows = n * image_rows;
    std::unique_ptr<float[]> columns(
        new float[static_cast<size_t>(std::max<int64_t>(std::min(block_rows, rows), 1) * cols)]);
    for (int64_t r0 = 0; r0 < std::max<int64_t>(rows, n); r0 += std::max<int64_t>(block_rows, 1)) {
      const int64_t r1 = std::min(rows, r0 + block_rows);
      const int64_t b_first = image_rows ? r0 / image_rows : r0;
      const int64_t b_last = image_rows ? (r1 + image_rows - 1) / image_rows : r0 + 1;
      for (int64_t g = 0; g < w.groups; ++g) {
        if (r1 > r0 && cg > 0) {
          const GroupRows shifted{xd + r0 * c, c, g * cg, cg};
          Int8Activations a;
          a.m = r1 - r0;
          a.lda = lda;
          a.params = params;
          if (w.groups == 1 && lda == c) {
            a.a = xd + r0 * c;  // the channels-last rows are the GEMM's input as they are
          } else {
            a.fill = fill_group_rows;
            a.fill_context = &shifted;
          }
          Int8Output o;
          o.f32 = columns.get();
          o.ldo = cols;
          int8_linear_gemm(a, *w.group_weights[g], o);
        }
        // col2im: input pixel (b, ih, iw), tap (i, j) adds to output pixel
        // (ih * s - p + i * d, iw * s - p + j * d).
        parallel_for(b_first, b_last, 1, [&](int64_t b0, int64_t b1) {
          for (int64_t b = b0; b < b1; ++b) {
            double* image = sums.get() + b * image_sums;
            // Zeroed by the block holding the image's first row, before any sum lands.
            if (g == 0 && (image_rows == 0 || r0 <= b * image_rows)) {
              std::fill(image, image + image_sums, 0.0);
            }
            if (cg == 0) continue;
            const int64_t first = std::max(r0, b * image_rows);
            const int64_t last = std::min(r1, (b + 1) * image_rows);
            for (int64_t r = first; r < last; ++r) {
              const int64_t ih = (r / wd) % h, iw = r % wd;
              const float* col = columns.get() + (r - r0) * cols;
              for (int64_t i = 0; i < w.kernel[0]; ++i) {
                const int64_t y = ih * w.stride[0] - w.padding[0] + i * w.dilation[0];
                if (y < 0 || y >= oh) continue;
                for (int64_t j = 0; j < w.kernel[1]; ++j) {
                  const int64_t xo = iw * w.stride[1] - w.padding[1] + j * w.dilation[1];
                  if (xo < 0 || xo >= ow) continue;
                  double* __restrict dst = image + (y * ow + xo) * co + g * og;
                  const float* __restrict src = col + (i * w.kernel[1] + j) * og;
                  for (int64_t k = 0; k < og; ++k) dst[k] += src[k];
                }
              }
            }
          }
        });
      }
    }
    // y = sum * x_scale * w_scale + bias (into the sums' memory, as floats), then requantized
    // as quantize_per_tensor does, by the SIMD quantizer of the CPU level.
    const float scale = static_cast<float>(iq.scale()) * static_cast<float>(w.weight_scale);
    const float* bias = w.bias.defined() ? w.bias.data<float>() : nullptr;
    const int64_t pixels = n * oh * ow;
    constexpr int64_t kChunk = 256;  // output pixels converted into a small float buffer
    parallel_for(0, (pixels + kChunk - 1) / kChunk, 1, [&](int64_t c0, int64_t c1) {
      std::vector<float> real(static_cast<size_t>(kChunk * co));
      for (int64_t chunk = c0; chunk < c1; ++chunk) {
        const int64_t p0 = chunk * kChunk, p1 = std::min(pixels, p0 + kChunk);
        for (int64_t p = p0; p < p1; ++p) {
          const double* __restrict sum = sums.get() + p * co;
          float* __restrict y = real.data() + (p - p0) * co;
          for (int64_t k = 0; k < co; ++k) {
            y[k] = static_cast<float>(sum[k]) * scale + (bias ? bias[k] : 0.f);
          }
        }
        QuantizeRowsArgs qa;
        qa.x = real.data();
        qa.m = p1 - p0;
        qa.k = co;
        qa.ldx = co;
        qa.inv_scale = 1.f / static_cast<float>(out_scale);
        qa.zero_point = static_cast<int32_t>(out_zero_point);
        qa.qmax = 255;
        qa.a = result_data + p0 * co;
        qa.lda = co;
        quantize_rows_u8_stub(Device(), qa);
      }
    });
  }
  Tensor y = permute(result, {0, 3, 1, 2});
  if (dims == 1) y = select(y, 2, 0);
  return batched ? y : select(y, 0, 0);
}

}  // namespace native
}  // namespace ember
