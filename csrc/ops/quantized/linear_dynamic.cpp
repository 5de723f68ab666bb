#include "ops/quantized/linear_dynamic.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>

#include "core/allocator.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/shape.h"
#include "ops/conversion.h"
#include "ops/creation.h"
#include "ops/quantized/quantize.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(int8_pack_weights_stub, Int8PackWeightsFn);
EMBER_DEFINE_STUB(int8_gemm_stub, Int8GemmFn);
EMBER_DEFINE_STUB(quantize_rows_u8_stub, QuantizeRowsFn);
EMBER_DEFINE_STUB(min_max_rows_stub, MinMaxRowsFn);
EMBER_DEFINE_STUB(quantized_binary_u8_stub, QuantizedBinaryFn);
EMBER_DEFINE_STUB(depthwise_u8_stub, DepthwiseFn);
EMBER_DEFINE_STUB(grouped_conv_u8_stub, GroupedConvFn);
EMBER_DEFINE_STUB(tap_sums_u8_stub, TapSumsFn);
EMBER_DEFINE_STUB(embedding_row_stub, EmbeddingRowFn);
EMBER_DEFINE_STUB(embedding_bag_rows_stub, EmbeddingBagRowsFn);

namespace {

constexpr const char* kOp = "quantized::linear_dynamic";
// Below this the scale of a near-constant input is raised (PyTorch's SMALL_SCALE_THRESHOLD):
// a tiny scale would make 1 / scale overflow float.
constexpr double kSmallScale = 6.1e-5;
// The int32 arithmetic cannot overflow: the sums a w, the offsets a_zp colsum(w) and
// K a_zp w_zp, and w_zp rowsum(a) are each at most K * 255 * 128 in magnitude, and their total
// stays below 2^31 for K <= 2^14.
constexpr int64_t kMaxDepth = 16384;

}  // namespace

namespace {

// min and max of x (m x k, contiguous), blocks of rows in parallel (a serial pass over a
// 128 x 3072 input took a tenth of the 2-thread call).
void min_max_parallel(const float* x, int64_t m, int64_t k, float* lo, float* hi) {
  std::mutex mu;
  *lo = std::numeric_limits<float>::infinity();
  *hi = -*lo;
  bool nan = false;
  parallel_for(0, m, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(k, 1)),
               [&](int64_t r0, int64_t r1) {
                 float l = 0, h = 0;
                 min_max_rows_stub(Device(), x + r0 * k, r1 - r0, k, k, &l, &h);
                 std::lock_guard<std::mutex> lock(mu);
                 nan |= std::isnan(l);
                 *lo = std::min(*lo, l);
                 *hi = std::max(*hi, h);
               });
  if (nan) *lo = *hi = std::numeric_limits<float>::quiet_NaN();
}

}  // namespace

void int8_linear_gemm(const Int8Activations& in, const PackedLinearWeight& w,
                      const Int8Output& out) {
  const int64_t k = w.weight.size(1);
  std::vector<int32_t> row_sums;
  if (!w.column_zero_points.empty() && !in.fill) {  // the w_zp * rowsum(a) term
    row_sums.resize(in.m);
    for (int64_t i = 0; i < in.m; ++i) {
      int32_t s = 0;
      for (int64_t e = 0; e < k; ++e) s += in.a[i * in.lda + e];
      row_sums[i] = s;
    }
  }
  Int8GemmArgs g;
  g.a = in.a;
  g.m = in.m;
  g.lda = in.lda;
  g.a_7bit = in.seven_bit;
  g.a_scale = in.params.scale;
  g.a_zero_point = in.params.zero_point;
  g.a_row_sums = row_sums.empty() ? nullptr : row_sums.data();
  g.w = &w.packed;
  g.w_scales = w.column_scales.data();
  g.w_zero_points = w.column_zero_points.empty() ? nullptr : w.column_zero_points.data();
  g.bias = w.bias.defined() ? w.bias.data<float>() : nullptr;
  g.relu = out.relu;
  g.out = out.f32;
  g.out_u8 = out.u8;
  g.out_inv_scale = 1.f / static_cast<float>(out.scale);
  g.out_zero_point = static_cast<int32_t>(out.zero_point);
  g.ldo = out.ldo;
  g.fill_a = in.fill;
  g.fill_a_context = in.fill_context;
  int8_gemm_stub(Device(), g);
}

QuantParams choose_quantization_params(float min, float max, int32_t qmin, int32_t qmax,
                                       bool reduce_range) {
  EMBER_CHECK(std::isfinite(min) && std::isfinite(max), "[", kOp,
              "] the input's range must be finite to choose quantization parameters, got min ", min,
              " and max ", max, " (the input holds NaN or inf)");
  EMBER_CHECK(min <= max, "[", kOp, "] min ", min, " > max ", max);
  if (reduce_range) {
    qmin /= 2;
    qmax /= 2;
  }
  double lo = std::min(min, 0.f), hi = std::max(max, 0.f);
  double scale = (hi - lo) / (qmax - qmin);
  if (static_cast<float>(scale) == 0.f || std::isinf(1.f / static_cast<float>(scale))) scale = 0.1;
  if (scale < kSmallScale) {
    const double original = scale;
    scale = kSmallScale;
    if (lo == 0) {
      hi = scale * (qmax - qmin);
    } else if (hi == 0) {
      lo = -scale * (qmax - qmin);
    } else {
      lo *= scale / original;
      hi *= scale / original;
    }
  }
  // Of the zero points that put lo on qmin and hi on qmax, the one with less rounding error.
  const double from_min = qmin - lo / scale, from_max = qmax - hi / scale;
  const double error_min = std::abs(qmin) - std::abs(lo / scale);
  const double error_max = std::abs(qmax) - std::abs(hi / scale);
  const double initial = error_min < error_max ? from_min : from_max;
  QuantParams p;
  p.scale = static_cast<float>(scale);
  p.zero_point = initial < qmin   ? qmin
                 : initial > qmax ? qmax
                                  : static_cast<int32_t>(std::nearbyint(initial));
  return p;
}

Tensor quantize_weight_s8(const Tensor& weight, const std::vector<double>& scales,
                          const std::vector<int64_t>& zero_points) {
  EMBER_CHECK_T(TypeError, weight.is_floating_point(),
                "[quantize_weight] expected a floating point weight, got ",
                dtype_name(weight.dtype()));
  EMBER_CHECK(weight.dim() == 2, "[quantize_weight] expected a 2-D weight, got ", weight.dim(),
              "-D");
  const int64_t n = weight.size(0), k = weight.size(1);
  EMBER_CHECK(scales.size() == 1 || static_cast<int64_t>(scales.size()) == n, "[quantize_weight] ",
              scales.size(), " scales for ", n, " output channels");
  EMBER_CHECK(zero_points.size() == scales.size(), "[quantize_weight] ", zero_points.size(),
              " zero points for ", scales.size(), " scales");
  const Tensor w = contiguous(to(weight, ScalarType::Float32, weight.device()));
  Tensor q = empty({n, k}, TensorOptions(ScalarType::Int8));
  const float* src = w.data<float>();
  int8_t* dst = q.data<int8_t>();
  for (int64_t j = 0; j < n; ++j) {
    const size_t c = scales.size() == 1 ? 0 : j;
    EMBER_CHECK_T(ValueError, scales[c] > 0 && std::isfinite(scales[c]),
                  "[quantize_weight] scale must be positive and finite, got ", scales[c]);
    EMBER_CHECK_T(ValueError, zero_points[c] >= -128 && zero_points[c] <= 127,
                  "[quantize_weight] zero_point ", zero_points[c],
                  " is outside qint8's [-128, 127]");
    const float inv = 1.f / static_cast<float>(scales[c]);
    for (int64_t e = 0; e < k; ++e) {
      const float v = std::nearbyint(src[j * k + e] * inv) + static_cast<float>(zero_points[c]);
      dst[j * k + e] = static_cast<int8_t>(v > -128.f ? std::min(v, 127.f) : -128.f);
    }
  }
  return q;
}

std::shared_ptr<PackedLinearWeight> pack_linear_weight(const Tensor& weight_int8,
                                                       std::vector<double> scales,
                                                       std::vector<int64_t> zero_points,
                                                       bool per_channel, const Tensor& bias) {
  EMBER_CHECK_T(TypeError, weight_int8.dtype() == ScalarType::Int8,
                "[linear_prepack] expected an int8 weight, got ", dtype_name(weight_int8.dtype()));
  EMBER_CHECK(weight_int8.dim() == 2, "[linear_prepack] expected a 2-D weight (out, in), got ",
              weight_int8.dim(), "-D");
  const int64_t n = weight_int8.size(0), k = weight_int8.size(1);
  EMBER_CHECK(k <= kMaxDepth, "[linear_prepack] in_features ", k, " exceeds ", kMaxDepth,
              ", beyond which the int32 sums could overflow; keep this layer in float");
  const size_t channels = per_channel ? static_cast<size_t>(n) : 1;
  EMBER_CHECK(scales.size() == channels && zero_points.size() == channels, "[linear_prepack] ",
              scales.size(), " scales and ", zero_points.size(), " zero points for ",
              per_channel ? "per-channel" : "per-tensor", " weights of ", n, " channels");
  auto p = std::make_shared<PackedLinearWeight>();
  p->weight = contiguous(weight_int8);
  p->per_channel = per_channel;
  p->column_scales.resize(n);
  bool any_zero_point = false;
  for (int64_t j = 0; j < n; ++j) {
    const size_t c = per_channel ? j : 0;
    EMBER_CHECK_T(ValueError, scales[c] > 0 && std::isfinite(scales[c]),
                  "[linear_prepack] weight scale must be positive and finite, got ", scales[c]);
    EMBER_CHECK_T(ValueError, zero_points[c] >= -128 && zero_points[c] <= 127,
                  "[linear_prepack] weight zero_point ", zero_points[c],
                  " is outside qint8's [-128, 127]");
    p->column_scales[j] = static_cast<float>(scales[c]);
    any_zero_point |= zero_points[c] != 0;
  }
  if (any_zero_point) {
    p->column_zero_points.resize(n);
    for (int64_t j = 0; j < n; ++j) {
      p->column_zero_points[j] = static_cast<int32_t>(zero_points[per_channel ? j : 0]);
    }
  }
  p->scales = std::move(scales);
  p->zero_points = std::move(zero_points);
  if (bias.defined()) {
    EMBER_CHECK(bias.dim() == 1 && bias.size(0) == n, "[linear_prepack] bias of shape ",
                shape_str(bias.sizes()), " for ", n, " output features");
    p->bias = contiguous(to(bias, ScalarType::Float32, bias.device()));
  }
  int8_pack_weights_stub(Device(), p->weight.data<int8_t>(), n, k, k, p->packed);
  return p;
}

Tensor linear_dynamic(const Tensor& x, const PackedLinearWeight& w, bool reduce_range, bool relu) {
  const int64_t n = w.weight.size(0), k = w.weight.size(1);
  EMBER_CHECK_T(TypeError, x.is_floating_point(), "[", kOp,
                "] expected a floating point input, got ", dtype_name(x.dtype()));
  EMBER_CHECK(x.dim() >= 1 && x.size(x.dim() - 1) == k, "[", kOp, "] input of shape ",
              shape_str(x.sizes()), " for a weight of shape ", shape_str(w.weight.sizes()),
              ": the last dim must be ", k);
  std::vector<int64_t> out_shape(x.sizes().begin(), x.sizes().end());
  out_shape.back() = n;
  const Tensor x2 = contiguous(to(x, ScalarType::Float32, x.device()));
  int64_t m = 1;
  for (int64_t d = 0; d + 1 < x.dim(); ++d) m *= x.size(d);
  Tensor out = empty(out_shape, TensorOptions(ScalarType::Float32));
  if (m == 0 || n == 0) return to(out, x.dtype(), x.device());
  if (k == 0) {  // an empty sum: the bias alone
    float* o = out.data<float>();
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const float b = w.bias.defined() ? w.bias.data<float>()[j] : 0.f;
        o[i * n + j] = relu ? std::max(b, 0.f) : b;
      }
    }
    return to(out, x.dtype(), x.device());
  }
  linear_dynamic_into(reshape(out, {m, n}), reshape(x2, {m, k}), w, reduce_range, relu);
  return x.dtype() == ScalarType::Float32 ? out : to(out, x.dtype(), x.device());
}

void linear_dynamic_into(const Tensor& out, const Tensor& x, const PackedLinearWeight& w,
                         bool reduce_range, bool relu) {
  const int64_t m = x.size(0), k = x.size(1);
  EMBER_CHECK(x.dtype() == ScalarType::Float32 && out.dtype() == ScalarType::Float32 &&
                  x.is_contiguous() && out.is_contiguous() && k == w.weight.size(1) &&
                  out.size(0) == m && out.size(1) == w.weight.size(0),
              "[", kOp, "] linear_dynamic_into needs contiguous float32 x (m, ", w.weight.size(1),
              ") and out (m, ", w.weight.size(0), ")");
  if (m == 0) return;
  const float* xd = x.data<float>();
  float lo = 0, hi = 0;
  min_max_parallel(xd, m, k, &lo, &hi);
  const QuantParams q = choose_quantization_params(lo, hi, 0, 255, reduce_range);
  const int64_t lda = int8_gemm_padded_k(k);
  std::vector<uint8_t> a(static_cast<size_t>(m * lda));
  QuantizeRowsArgs qa;
  qa.x = xd;
  qa.m = m;
  qa.k = k;
  qa.ldx = k;
  qa.inv_scale = 1.f / q.scale;
  qa.zero_point = q.zero_point;
  qa.qmax = reduce_range ? 127 : 255;
  qa.a = a.data();
  qa.lda = lda;
  quantize_rows_u8_stub(Device(), qa);
  Int8Output o;
  o.f32 = out.data<float>();
  o.ldo = w.weight.size(0);
  o.relu = relu;
  int8_linear_gemm({a.data(), m, lda, reduce_range, q}, w, o);
}

Tensor linear_quantized(const Tensor& q_input, const PackedLinearWeight& w, double out_scale,
                        int64_t out_zero_point, bool relu) {
  const char* op = "quantized::linear";
  EMBER_CHECK_T(TypeError, q_input.dtype() == ScalarType::QUInt8, "[", op,
                "] expected a quint8 input (quantize it with a QuantStub or "
                "quantize_per_tensor), got ",
                dtype_name(q_input.dtype()));
  const Quantizer& iq = quantizer_of(q_input, op);
  EMBER_CHECK(!iq.per_channel(), "[", op, "] expected a per-tensor quantized input");
  const int64_t n = w.weight.size(0), k = w.weight.size(1);
  EMBER_CHECK(q_input.dim() >= 1 && q_input.size(q_input.dim() - 1) == k, "[", op,
              "] input of shape ", shape_str(q_input.sizes()), " for a weight of shape ",
              shape_str(w.weight.sizes()), ": the last dim must be ", k);
  std::vector<int64_t> out_shape(q_input.sizes().begin(), q_input.sizes().end());
  out_shape.back() = n;
  int64_t m = 1;
  for (int64_t d = 0; d + 1 < q_input.dim(); ++d) m *= q_input.size(d);
  Tensor out =
      empty_per_tensor_quantized(out_shape, ScalarType::QUInt8, out_scale, out_zero_point, op);
  if (m > 0 && n > 0) {
    // The integers, rows zero-padded to what the GEMM reads.
    const Tensor ints = contiguous(quantized_storage_view(q_input));
    const int64_t lda = int8_gemm_padded_k(k);
    std::vector<uint8_t> a(static_cast<size_t>(m * lda), 0);
    uint8_t largest = 0;  // 7-bit inputs (reduce_range observers) take the faster product
    for (int64_t i = 0; i < m; ++i) {
      const uint8_t* row = ints.data<uint8_t>() + i * k;
      std::memcpy(a.data() + i * lda, row, k);
      for (int64_t e = 0; e < k; ++e) largest = std::max(largest, row[e]);
    }
    QuantParams q;
    q.scale = static_cast<float>(iq.scale());
    q.zero_point = static_cast<int32_t>(iq.zero_point());
    Int8Output o;
    o.u8 = quantized_storage_view(out).data<uint8_t>();
    o.ldo = n;
    o.scale = out_scale;
    o.zero_point = out_zero_point;
    o.relu = relu;
    int8_linear_gemm({a.data(), m, lda, largest <= 127, q}, w, o);
  }
  return out;
}

}  // namespace native
}  // namespace ember
