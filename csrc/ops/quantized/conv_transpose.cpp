#include "ops/quantized/conv_transpose.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

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

// Along one axis of a transposed convolution: for each output position o, the (tap k, input
// position i) pairs with o = i * stride - padding + k * dilation, i inside the input.
struct AxisTaps {
  std::vector<int64_t> begin;  // pairs of o: [begin[o], begin[o + 1])
  std::vector<int64_t> tap, input;

  AxisTaps(int64_t out, int64_t in, int64_t kernel, int64_t stride, int64_t padding,
           int64_t dilation) {
    begin.reserve(static_cast<size_t>(out + 1));
    for (int64_t o = 0; o < out; ++o) {
      begin.push_back(static_cast<int64_t>(tap.size()));
      for (int64_t k = 0; k < kernel; ++k) {
        const int64_t t = o + padding - k * dilation;
        if (t < 0 || t % stride != 0 || t / stride >= in) continue;
        tap.push_back(k);
        input.push_back(t / stride);
      }
    }
    begin.push_back(static_cast<int64_t>(tap.size()));
  }
  int64_t max_count() const {
    int64_t most = 0;
    for (size_t o = 0; o + 1 < begin.size(); ++o) most = std::max(most, begin[o + 1] - begin[o]);
    return most;
  }
};

struct TransposedGeometry {
  const PackedConvTransposeWeight& w;
  int64_t n, c, h, wd, oh, ow;
  int64_t co, cg, og, taps, cols;  // cols: one group's GEMM columns (taps x og)
  AxisTaps rows, cols_of_x;

  TransposedGeometry(const PackedConvTransposeWeight& w_, int64_t n_, int64_t c_, int64_t h_,
                     int64_t wd_, int64_t oh_, int64_t ow_)
      : w(w_),
        n(n_),
        c(c_),
        h(h_),
        wd(wd_),
        oh(oh_),
        ow(ow_),
        co(w_.out_channels),
        cg(c_ / w_.groups),
        og(w_.out_channels / w_.groups),
        taps(w_.kernel[0] * w_.kernel[1]),
        cols(taps * og),
        rows(oh_, h_, w_.kernel[0], w_.stride[0], w_.padding[0], w_.dilation[0]),
        cols_of_x(ow_, wd_, w_.kernel[1], w_.stride[1], w_.padding[1], w_.dilation[1]) {}
};

// The output rows [y0, y1) of image b. The int8 GEMM gives, for every input pixel of the input
// rows those output rows read, each tap's contribution to og output channels per group (exact
// integers: the weight is packed with scale 1). Each output pixel then sums the contributions
// that reach it (a gather: no scatter into a zeroed buffer, each output written once), in T:
// float where every sum stays exact, summed, scaled, biased and requantized by the CPU level's
// SIMD kernel (tap_sums_u8); else double, in a plain loop before the SIMD requantizer.
template <typename T>
void gather_band(const TransposedGeometry& g, const uint8_t* xd, int32_t x_zero_point, float scale,
                 double out_scale, int64_t out_zero_point, int64_t b, int64_t y0, int64_t y1,
                 std::vector<float>& columns, uint8_t* result_data) {
  const PackedConvTransposeWeight& w = g.w;
  const int64_t ldc = w.groups * g.cols;  // one input pixel's columns, all groups
  int64_t lo = g.h, hi = -1;              // the input rows the band reads
  for (int64_t y = y0; y < y1; ++y) {
    for (int64_t e = g.rows.begin[y]; e < g.rows.begin[y + 1]; ++e) {
      lo = std::min(lo, g.rows.input[e]);
      hi = std::max(hi, g.rows.input[e]);
    }
  }
  if (hi >= lo && g.cg > 0 && g.wd > 0) {
    const int64_t m = (hi - lo + 1) * g.wd, first_pixel = (b * g.h + lo) * g.wd;
    columns.resize(static_cast<size_t>(m * ldc));
    const int64_t lda = int8_gemm_padded_k(g.cg);
    for (int64_t group = 0; group < w.groups; ++group) {
      const GroupRows shifted{xd + first_pixel * g.c, g.c, group * g.cg, g.cg};
      Int8Activations a;
      a.m = m;
      a.lda = lda;
      a.params.zero_point = x_zero_point;  // scale 1: the float output is the integer sum
      if (w.groups == 1 && lda == g.c) {
        a.a = xd + first_pixel * g.c;  // the channels-last rows are the GEMM's input as they are
      } else {
        a.fill = fill_group_rows;
        a.fill_context = &shifted;
      }
      Int8Output o;
      o.f32 = columns.data() + group * g.cols;
      o.ldo = ldc;
      int8_linear_gemm(a, *w.group_weights[group], o);
    }
  }
  const float* bias = w.bias.defined() ? w.bias.data<float>() : nullptr;
  // In parallel when the bands themselves are not (one image, few bands).
  parallel_for(y0, y1, 1, [&](int64_t r0, int64_t r1) {
    std::vector<const float*> taps;
    std::vector<int64_t> tap_begin(static_cast<size_t>(g.ow + 1));
    std::vector<float> real;
    for (int64_t y = r0; y < r1; ++y) {
      // The contributions reaching each (y, x): one pointer per (row tap, column tap), at
      // group 0's columns.
      taps.clear();
      for (int64_t x = 0; x < g.ow; ++x) {
        tap_begin[x] = static_cast<int64_t>(taps.size());
        for (int64_t er = g.rows.begin[y]; er < g.rows.begin[y + 1]; ++er) {
          const float* row = columns.data() + (g.rows.input[er] - lo) * g.wd * ldc +
                             g.rows.tap[er] * w.kernel[1] * g.og;
          for (int64_t ec = g.cols_of_x.begin[x]; ec < g.cols_of_x.begin[x + 1]; ++ec) {
            taps.push_back(row + g.cols_of_x.input[ec] * ldc + g.cols_of_x.tap[ec] * g.og);
          }
        }
      }
      tap_begin[g.ow] = static_cast<int64_t>(taps.size());
      uint8_t* out_row = result_data + (b * g.oh + y) * g.ow * g.co;
      if constexpr (std::is_same_v<T, float>) {  // summed and requantized by the SIMD kernel
        for (int64_t group = 0; group < w.groups; ++group) {
          TapSumsArgs ts;
          ts.taps = taps.data();
          ts.tap_begin = tap_begin.data();
          ts.pixels = g.ow;
          ts.channels = g.og;
          ts.offset = group * g.cols;
          ts.scale = scale;
          ts.bias = bias ? bias + group * g.og : nullptr;
          ts.inv_scale = 1.f / static_cast<float>(out_scale);
          ts.zero_point = static_cast<int32_t>(out_zero_point);
          ts.out = out_row + group * g.og;
          ts.ldo = g.co;
          tap_sums_u8_stub(Device(), ts);
        }
      } else {  // exact sums of wide groups in double, then the SIMD requantizer
        real.resize(static_cast<size_t>(g.ow * g.co));
        for (int64_t x = 0; x < g.ow; ++x) {
          for (int64_t group = 0; group < w.groups; ++group) {
            for (int64_t k = 0; k < g.og; ++k) {
              double sum = 0;
              for (int64_t e = tap_begin[x]; e < tap_begin[x + 1]; ++e) {
                sum += taps[e][group * g.cols + k];
              }
              const int64_t channel = group * g.og + k;
              real[x * g.co + channel] =
                  static_cast<float>(sum) * scale + (bias ? bias[channel] : 0.f);
            }
          }
        }
        QuantizeRowsArgs qa;
        qa.x = real.data();
        qa.m = g.ow;
        qa.k = g.co;
        qa.ldx = g.co;
        qa.inv_scale = 1.f / static_cast<float>(out_scale);
        qa.zero_point = static_cast<int32_t>(out_zero_point);
        qa.qmax = 255;
        qa.a = out_row;
        qa.lda = g.co;
        quantize_rows_u8_stub(Device(), qa);
      }
    }
  });
}

// Every image's output rows in bands, in parallel: a band's GEMM columns stay about 256 KB (in
// cache for the gather); input rows shared by two bands are multiplied twice.
template <typename T>
void gather_bands(const TransposedGeometry& g, const uint8_t* xd, const Quantizer& iq,
                  double out_scale, int64_t out_zero_point, uint8_t* result_data) {
  const PackedConvTransposeWeight& w = g.w;
  constexpr int64_t kColumnBudget = int64_t{1} << 16;  // floats
  const int64_t row_floats = std::max<int64_t>(g.wd * w.groups * g.cols, 1);
  // At least eight input rows per row of halo (input rows two bands share), so the repeated
  // GEMM rows stay under an eighth; more when the columns still fit the budget (about L2).
  const int64_t halo = ((w.kernel[0] - 1) * w.dilation[0] + w.stride[0] - 1) / w.stride[0];
  const int64_t in_rows = std::max<int64_t>({1, kColumnBudget / row_floats, 8 * halo});
  const int64_t band = std::max<int64_t>(1, in_rows * w.stride[0]);
  const int64_t bands = (g.oh + band - 1) / band;
  const float scale = static_cast<float>(iq.scale()) * static_cast<float>(w.weight_scale);
  const int32_t x_zero_point = static_cast<int32_t>(iq.zero_point());
  // Bands in parallel when there are enough of them; else one after another, each with its GEMM
  // and gather parallel inside.
  const int64_t units = g.n * bands;
  const int64_t grain = units >= 2 * get_num_threads() ? 1 : units;
  parallel_for(0, units, grain, [&](int64_t u0, int64_t u1) {
    std::vector<float> columns;
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t b = u / bands, y0 = (u % bands) * band, y1 = std::min(g.oh, y0 + band);
      gather_band<T>(g, xd, x_zero_point, scale, out_scale, out_zero_point, b, y0, y1, columns,
                     result_data);
    }
  });
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
  const int64_t cg = c / w.groups;
  Tensor result = empty_per_tensor_quantized({n, oh, ow, co}, ScalarType::QUInt8, out_scale,
                                             out_zero_point, kOp);
  uint8_t* result_data = quantized_storage_view(result).data<uint8_t>();
  if (n > 0 && co > 0) {
    const Tensor xs = channels_last_ints(x);
    const TransposedGeometry geo{w, n, c, h, wd, oh, ow};
    const int64_t max_overlap = geo.rows.max_count() * geo.cols_of_x.max_count();
    // Float sums are exact when no sum can pass 2^24: each product is at most 255 * 255 in
    // magnitude (both zero points subtracted), an output sums max_overlap taps of cg of them.
    const bool float_exact = max_overlap * std::max<int64_t>(cg, 1) * 255 * 255 <= (1 << 24);
    if (float_exact) {
      gather_bands<float>(geo, xs.data<uint8_t>(), iq, out_scale, out_zero_point, result_data);
    } else {
      gather_bands<double>(geo, xs.data<uint8_t>(), iq, out_scale, out_zero_point, result_data);
    }
  }
  Tensor y = permute(result, {0, 3, 1, 2});
  if (dims == 1) y = select(y, 2, 0);
  return batched ? y : select(y, 0, 0);
}

}  // namespace native
}  // namespace ember
