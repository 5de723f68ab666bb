#include "ops/quantized/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "core/error.h"
#include "core/factory.h"
#include "core/parallel.h"
#include "core/quantizer.h"
#include "core/shape.h"
#include "dispatch/copy.h"
#include "kernels/quantized_stubs.h"
#include "ops/conversion.h"
#include "ops/creation.h"
#include "ops/quantized/linear_dynamic.h"
#include "ops/views.h"

namespace ember {
namespace native {

namespace {

void check_quantized_dtype(ScalarType dtype, const char* op) {
  EMBER_CHECK_T(TypeError, is_quantized(dtype), "[", op,
                "] expected a quantized dtype (qint8, quint8, qint32 or quint4x2), got ",
                dtype_name(dtype));
}

void check_params(double scale, int64_t zero_point, ScalarType dtype, const char* op) {
  EMBER_CHECK_T(ValueError, scale > 0 && std::isfinite(scale), "[", op,
                "] scale must be positive and finite, got ", scale);
  int64_t qmin = 0, qmax = 0;
  quantized_range(dtype, &qmin, &qmax);
  EMBER_CHECK_T(ValueError, zero_point >= qmin && zero_point <= qmax, "[", op, "] zero_point ",
                zero_point, " is outside ", dtype_name(dtype), "'s range [", qmin, ", ", qmax, "]");
}

// float32, contiguous.
Tensor float_input(const Tensor& x, const char* op) {
  EMBER_CHECK_T(TypeError, x.is_floating_point(), "[", op,
                "] expected a floating point tensor, got ", dtype_name(x.dtype()));
  return contiguous(to(x, ScalarType::Float32, x.device()));
}

// A fresh contiguous quantized tensor of x's shape.
Tensor empty_quantized(IntArrayRef sizes, ScalarType dtype, intrusive_ptr<Quantizer> q,
                       const char* op) {
  Tensor out = empty_tensor(sizes, dtype, Device(), op);
  out.impl()->set_quantizer(std::move(q));
  return out;
}

// Writes clamp(zp + nearbyint(x * inv_scale)) for elements [begin, end) with one (scale, zp),
// as PyTorch's quantize_val: the product and rounding in float, the clamp before the cast.
template <typename Q>
void quantize_range(const float* x, Q* q, int64_t begin, int64_t end, double scale,
                    int64_t zero_point, int64_t qmin, int64_t qmax) {
  const float inv = 1.f / static_cast<float>(scale);
  const float zp = static_cast<float>(zero_point);
  const double lo = static_cast<double>(qmin), hi = static_cast<double>(qmax);
  for (int64_t i = begin; i < end; ++i) {
    const double v = static_cast<double>(zp + std::nearbyint(x[i] * inv));
    q[i] = static_cast<Q>(v > lo ? std::min(v, hi) : lo);  // NaN -> qmin
  }
}

template <typename F>
void for_storage_type(ScalarType dtype, F&& f) {
  switch (quantized_storage_type(dtype)) {
    case ScalarType::Int8:
      f(int8_t{});
      break;
    case ScalarType::UInt8:
      f(uint8_t{});
      break;
    default:
      f(int32_t{});
      break;
  }
}

// Channel geometry of a contiguous tensor along `axis`: outer x channels x inner.
struct ChannelLayout {
  int64_t outer = 1, channels = 1, inner = 1;
  ChannelLayout(IntArrayRef sizes, int64_t axis) {
    for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d) {
      if (d < axis) outer *= sizes[d];
      if (d == axis) channels = sizes[d];
      if (d > axis) inner *= sizes[d];
    }
  }
};

int64_t checked_axis(int64_t axis, int64_t dim, const char* op) {
  EMBER_CHECK_T(IndexError, axis >= -dim && axis < dim && dim > 0, "[", op, "] axis ", axis,
                " is out of range for a ", dim, "-D tensor");
  return axis < 0 ? axis + dim : axis;
}

}  // namespace

void quantized_range(ScalarType dtype, int64_t* qmin, int64_t* qmax) {
  switch (dtype) {
    case ScalarType::QInt8:
      *qmin = -128;
      *qmax = 127;
      return;
    case ScalarType::QUInt8:
      *qmin = 0;
      *qmax = 255;
      return;
    case ScalarType::QUInt4x2:
      *qmin = 0;
      *qmax = 15;
      return;
    case ScalarType::QInt32:
      *qmin = std::numeric_limits<int32_t>::min();
      *qmax = std::numeric_limits<int32_t>::max();
      return;
    default:
      check_quantized_dtype(dtype, "quantize");
  }
}

Tensor quantized_storage_view(const Tensor& q) {
  return Tensor(make_intrusive<TensorImpl>(q.storage(), quantized_storage_type(q.dtype()),
                                           q.sizes(), q.strides(), q.storage_offset(),
                                           q.impl()->version_counter()));
}

const Quantizer& quantizer_of(const Tensor& q, const char* op) {
  EMBER_CHECK_T(TypeError, is_quantized(q.dtype()) && q.impl()->quantizer(), "[", op,
                "] expected a quantized tensor, got dtype ", dtype_name(q.dtype()));
  return *q.impl()->quantizer();
}

void check_same_quantization(const std::vector<Tensor>& inputs, const char* op_name) {
  EMBER_CHECK(!inputs.empty(), "[", op_name, "] expected a non-empty list of tensors");
  const Tensor& first = inputs[0];
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    EMBER_CHECK(is_quantized(t.dtype()) && t.dtype() == first.dtype(), "[", op_name, "] mixes ",
                dtype_name(first.dtype()), " and ", dtype_name(t.dtype()), " tensors (at position ",
                i, "): dequantize() them first");
    EMBER_CHECK(quantizer_of(t, op_name).same_as(quantizer_of(first, op_name)), "[", op_name,
                "] All inputs should share the same quantization parameters (position ", i,
                " differs from position 0): requantize them first");
  }
}

bool fixed_output_qparams(const char* op, ScalarType dtype, double* scale, int64_t* zero_point) {
  const std::string name(op);
  const bool unit = name == "sigmoid" || name == "hardsigmoid";  // outputs in [0, 1]
  const bool symmetric = name == "tanh";                         // outputs in [-1, 1]
  if (!(unit || symmetric) || (dtype != ScalarType::QUInt8 && dtype != ScalarType::QInt8)) {
    return false;
  }
  // PyTorch's quantized sigmoid / hardsigmoid / tanh: the whole output range on 256 steps.
  *scale = unit ? 1.0 / 256.0 : 2.0 / 256.0;
  if (dtype == ScalarType::QUInt8) {
    *zero_point = unit ? 0 : 128;
  } else {
    *zero_point = unit ? -128 : 0;
  }
  return true;
}

Tensor quantized_via_float(const Tensor& q, const char* op,
                           const std::function<Tensor(const Tensor&)>& f, const Tensor& out) {
  const Quantizer& qz = quantizer_of(q, op);
  EMBER_CHECK(!qz.per_channel(), "[", op,
              "] is not supported on a per-channel quantized tensor: dequantize() first");
  double scale = qz.scale();
  int64_t zero_point = qz.zero_point();
  fixed_output_qparams(op, q.dtype(), &scale, &zero_point);
  const Tensor result = quantize_per_tensor(f(dequantize(q)), scale, zero_point, q.dtype());
  if (!out.defined()) return result;
  EMBER_CHECK_T(TypeError,
                out.dtype() == q.dtype() && out.impl()->quantizer() &&
                    out.impl()->quantizer()->same_as(*result.impl()->quantizer()) &&
                    DimVector(out.sizes()) == DimVector(result.sizes()),
                "[", op, "] out must be a ", dtype_name(q.dtype()),
                " tensor with the result's shape and quantization parameters");
  copy_into(quantized_storage_view(out), quantized_storage_view(result), op);
  return out;
}

Tensor relabel_quantized(const Tensor& ints, const Tensor& like) {
  auto impl = make_intrusive<TensorImpl>(ints.storage(), like.dtype(), ints.sizes(), ints.strides(),
                                         ints.storage_offset(), ints.impl()->version_counter());
  impl->set_quantizer(like.impl()->quantizer());
  return Tensor(std::move(impl));
}

Tensor empty_per_tensor_quantized(IntArrayRef sizes, ScalarType dtype, double scale,
                                  int64_t zero_point, const char* op) {
  check_quantized_dtype(dtype, op);
  check_params(scale, zero_point, dtype, op);
  return empty_quantized(sizes, dtype, Quantizer::per_tensor(scale, zero_point), op);
}

Tensor quantize_per_tensor(const Tensor& x, double scale, int64_t zero_point, ScalarType dtype) {
  const char* op = "quantize_per_tensor";
  check_quantized_dtype(dtype, op);
  check_params(scale, zero_point, dtype, op);
  const Tensor xf = float_input(x, op);
  Tensor out = empty_quantized(x.sizes(), dtype, Quantizer::per_tensor(scale, zero_point), op);
  int64_t qmin = 0, qmax = 0;
  quantized_range(dtype, &qmin, &qmax);
  const float* src = xf.data<float>();
  const int64_t n = xf.numel();
  if (dtype == ScalarType::QUInt8 && n > 0) {  // the activations' case: the SIMD kernel
    QuantizeRowsArgs a;
    a.x = src;
    a.m = 1;
    a.k = n;
    a.ldx = n;
    a.inv_scale = 1.f / static_cast<float>(scale);
    a.zero_point = static_cast<int32_t>(zero_point);
    a.qmax = 255;
    a.a = out.data<uint8_t>();
    a.lda = n;
    // One row per grain of elements, so the kernel's row loop runs them in parallel.
    const int64_t chunk = kGrainSize;
    parallel_for(0, (n + chunk - 1) / chunk, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        QuantizeRowsArgs part = a;
        part.x = src + c * chunk;
        part.a = out.data<uint8_t>() + c * chunk;
        part.k = part.lda = std::min(chunk, n - c * chunk);
        part.ldx = part.k;
        quantize_rows_u8_stub(Device(), part);
      }
    });
    return out;
  }
  for_storage_type(dtype, [&](auto tag) {
    using Q = decltype(tag);
    Q* dst = static_cast<Q*>(out.data_ptr());
    parallel_for(0, n, kGrainSize, [&](int64_t b, int64_t e) {
      quantize_range(src, dst, b, e, scale, zero_point, qmin, qmax);
    });
  });
  return out;
}

Tensor quantize_per_channel(const Tensor& x, const std::vector<double>& scales,
                            const std::vector<int64_t>& zero_points, int64_t axis,
                            ScalarType dtype) {
  const char* op = "quantize_per_channel";
  check_quantized_dtype(dtype, op);
  axis = checked_axis(axis, x.dim(), op);
  const int64_t channels = x.size(axis);
  EMBER_CHECK_T(ValueError,
                static_cast<int64_t>(scales.size()) == channels &&
                    static_cast<int64_t>(zero_points.size()) == channels,
                "[", op, "] ", scales.size(), " scales and ", zero_points.size(),
                " zero points for ", channels, " channels (axis ", axis, " of shape ",
                shape_str(x.sizes()), ")");
  for (int64_t c = 0; c < channels; ++c) check_params(scales[c], zero_points[c], dtype, op);
  const Tensor xf = float_input(x, op);
  Tensor out =
      empty_quantized(x.sizes(), dtype, Quantizer::per_channel(scales, zero_points, axis), op);
  int64_t qmin = 0, qmax = 0;
  quantized_range(dtype, &qmin, &qmax);
  const ChannelLayout l(x.sizes(), axis);
  const float* src = xf.data<float>();
  for_storage_type(dtype, [&](auto tag) {
    using Q = decltype(tag);
    Q* dst = static_cast<Q*>(out.data_ptr());
    parallel_for(0, l.outer * l.channels,
                 std::max<int64_t>(1, kGrainSize / std::max<int64_t>(l.inner, 1)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t oc = b; oc < e; ++oc) {
                     const int64_t c = oc % l.channels;
                     quantize_range(src, dst, oc * l.inner, (oc + 1) * l.inner, scales[c],
                                    zero_points[c], qmin, qmax);
                   }
                 });
  });
  return out;
}

Tensor quantize_per_tensor_dynamic(const Tensor& x, ScalarType dtype, bool reduce_range) {
  const char* op = "quantize_per_tensor_dynamic";
  EMBER_CHECK_T(TypeError, dtype == ScalarType::QInt8 || dtype == ScalarType::QUInt8, "[", op,
                "] expected qint8 or quint8, got ", dtype_name(dtype));
  const Tensor xf = float_input(x, op);
  float lo = 0.f, hi = 0.f;
  if (xf.numel() > 0) {
    min_max_rows_stub(Device(), xf.data<float>(), 1, xf.numel(), xf.numel(), &lo, &hi);
  }
  int64_t qmin = 0, qmax = 0;
  quantized_range(dtype, &qmin, &qmax);
  const QuantParams p = choose_quantization_params(lo, hi, static_cast<int32_t>(qmin),
                                                   static_cast<int32_t>(qmax), reduce_range);
  return quantize_per_tensor(xf, p.scale, p.zero_point, dtype);
}

Tensor dequantize(const Tensor& q) {
  if (!is_quantized(q.dtype())) {  // as PyTorch: a float tensor passes through
    EMBER_CHECK_T(TypeError, q.is_floating_point(),
                  "[dequantize] expected a quantized tensor, got ", dtype_name(q.dtype()));
    return q;
  }
  const Quantizer& quant = quantizer_of(q, "dequantize");
  if (!quant.per_channel() && !q.is_contiguous() && q.dim() > 1) {
    // A dense permutation (a channels-last activation): the values in their memory order, the
    // result laid out the same way, no gather.
    std::vector<int64_t> order(q.dim());
    for (int64_t d = 0; d < q.dim(); ++d) order[d] = d;
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return q.stride(a) > q.stride(b); });
    const Tensor in_order = permute(q, order);
    if (in_order.is_contiguous()) {
      std::vector<int64_t> inverse(order.size());
      for (size_t i = 0; i < order.size(); ++i) inverse[order[i]] = static_cast<int64_t>(i);
      return permute(dequantize(in_order), inverse);
    }
  }
  const Tensor ints = contiguous(quantized_storage_view(q));
  Tensor out = empty_tensor(q.sizes(), ScalarType::Float32, Device(), "dequantize");
  float* dst = out.data<float>();
  const int64_t axis = quant.per_channel() ? quant.axis() : 0;
  const ChannelLayout l =
      quant.per_channel() ? ChannelLayout(q.sizes(), axis) : ChannelLayout({q.numel()}, 0);
  if (!quant.per_channel()) {  // one scale: a branch-free loop the compiler vectorises
    const double zp = static_cast<double>(quant.zero_point()), scale = quant.scale();
    for_storage_type(q.dtype(), [&](auto tag) {
      using Q = decltype(tag);
      const Q* __restrict src = static_cast<const Q*>(ints.data_ptr());
      float* __restrict d = dst;
      parallel_for(0, q.numel(), kGrainSize, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          d[i] = static_cast<float>((static_cast<double>(src[i]) - zp) * scale);
        }
      });
    });
    return out;
  }
  for_storage_type(q.dtype(), [&](auto tag) {
    using Q = decltype(tag);
    const Q* src = static_cast<const Q*>(ints.data_ptr());
    const int64_t inner = quant.per_channel() ? l.inner : q.numel();
    const int64_t rows = quant.per_channel() ? l.outer * l.channels : (q.numel() > 0 ? 1 : 0);
    parallel_for(0, rows * inner, kGrainSize, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const size_t c = quant.per_channel() ? static_cast<size_t>((i / inner) % l.channels) : 0;
        const double zp = quant.zero_point_value(c);
        dst[i] = static_cast<float>((static_cast<double>(src[i]) - zp) * quant.scales()[c]);
      }
    });
  });
  return out;
}

Tensor int_repr(const Tensor& q) {
  check_quantized_dtype(q.dtype(), "int_repr");
  if (q.dtype() == ScalarType::QUInt4x2) return pack_4bit(contiguous(quantized_storage_view(q)));
  return clone(quantized_storage_view(q));
}

Tensor pack_4bit(const Tensor& values) {
  const int64_t n = values.numel();
  Tensor out = empty({(n + 1) / 2}, TensorOptions(ScalarType::UInt8));
  const uint8_t* v = values.data<uint8_t>();
  uint8_t* o = out.data<uint8_t>();
  for (int64_t i = 0; i < n / 2; ++i) o[i] = static_cast<uint8_t>(v[2 * i] | (v[2 * i + 1] << 4));
  if (n % 2) o[n / 2] = v[n - 1];
  return out;
}

Tensor unpack_4bit(const Tensor& packed, int64_t n) {
  const char* op = "quint4x2";
  EMBER_CHECK_T(TypeError, packed.dtype() == ScalarType::UInt8, "[", op,
                "] packed values must be uint8, got ", dtype_name(packed.dtype()));
  EMBER_CHECK_T(ValueError, packed.numel() == (n + 1) / 2, "[", op, "] ", packed.numel(),
                " packed bytes for ", n, " 4-bit values (", (n + 1) / 2, " expected)");
  const Tensor p = contiguous(packed);
  Tensor out = empty({n}, TensorOptions(ScalarType::UInt8));
  const uint8_t* s = p.data<uint8_t>();
  uint8_t* o = out.data<uint8_t>();
  for (int64_t i = 0; i < n; ++i) o[i] = (s[i / 2] >> (4 * (i % 2))) & 0xF;
  return out;
}

Tensor quantize_per_channel_float_qparams(const Tensor& x, const std::vector<double>& scales,
                                          const std::vector<double>& zero_points, int64_t axis,
                                          ScalarType dtype) {
  const char* op = "quantize_per_channel";
  EMBER_CHECK_T(TypeError, dtype == ScalarType::QUInt8 || dtype == ScalarType::QUInt4x2, "[", op,
                "] float zero points (per_channel_affine_float_qparams) need quint8 or quint4x2, "
                "got ",
                dtype_name(dtype));
  axis = checked_axis(axis, x.dim(), op);
  const int64_t channels = x.size(axis);
  EMBER_CHECK_T(ValueError,
                static_cast<int64_t>(scales.size()) == channels &&
                    static_cast<int64_t>(zero_points.size()) == channels,
                "[", op, "] ", scales.size(), " scales and ", zero_points.size(),
                " zero points for ", channels, " channels (axis ", axis, ")");
  for (int64_t c = 0; c < channels; ++c) {
    EMBER_CHECK_T(ValueError, scales[c] > 0 && std::isfinite(scales[c]), "[", op,
                  "] scale must be positive and finite, got ", scales[c]);
    EMBER_CHECK_T(ValueError, std::isfinite(zero_points[c]), "[", op,
                  "] zero point must be finite, got ", zero_points[c]);
  }
  const Tensor xf = float_input(x, op);
  Tensor out = empty_quantized(x.sizes(), dtype,
                               Quantizer::per_channel_float_qparams(scales, zero_points, axis), op);
  int64_t qmin = 0, qmax = 0;
  quantized_range(dtype, &qmin, &qmax);
  const ChannelLayout l(x.sizes(), axis);
  const float* src = xf.data<float>();
  uint8_t* dst = out.data<uint8_t>();
  parallel_for(0, l.outer * l.channels,
               std::max<int64_t>(1, kGrainSize / std::max<int64_t>(l.inner, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t oc = b; oc < e; ++oc) {
                   const int64_t c = oc % l.channels;
                   // PyTorch's quantize_val_float_qparams: round(x / scale + zp) in float.
                   const float inv = 1.f / static_cast<float>(scales[c]);
                   const float zp = static_cast<float>(zero_points[c]);
                   for (int64_t i = oc * l.inner; i < (oc + 1) * l.inner; ++i) {
                     const float v = std::nearbyint(src[i] * inv + zp);
                     dst[i] = static_cast<uint8_t>(v > qmin ? std::min<float>(v, qmax) : qmin);
                   }
                 }
               });
  return out;
}

Tensor make_quantized_from_int_repr(const Tensor& ints, ScalarType dtype, QScheme scheme,
                                    const std::vector<double>& scales,
                                    const std::vector<double>& zero_points, int64_t axis,
                                    IntArrayRef sizes) {
  const char* op = "_make_quantized";
  check_quantized_dtype(dtype, op);
  EMBER_CHECK_T(ValueError, !scales.empty() && scales.size() == zero_points.size(), "[", op, "] ",
                scales.size(), " scales and ", zero_points.size(), " zero points");
  const int64_t n = checked_numel(sizes, op);
  Tensor values = dtype == ScalarType::QUInt4x2 ? unpack_4bit(ints, n) : contiguous(ints);
  EMBER_CHECK_T(TypeError, values.dtype() == quantized_storage_type(dtype), "[", op, "] ",
                dtype_name(dtype), " needs ", dtype_name(quantized_storage_type(dtype)),
                " integers, got ", dtype_name(values.dtype()));
  EMBER_CHECK_T(ValueError, values.numel() == n, "[", op, "] ", values.numel(),
                " integers for shape ", shape_str(sizes));
  int64_t qmin = 0, qmax = 0;
  quantized_range(dtype, &qmin, &qmax);
  if (dtype == ScalarType::QUInt4x2) {
    const uint8_t* v = values.data<uint8_t>();
    for (int64_t i = 0; i < n; ++i) {
      EMBER_CHECK_T(ValueError, v[i] <= qmax, "[", op, "] quint4x2 value ", int(v[i]),
                    " exceeds 15");
    }
  }
  intrusive_ptr<Quantizer> q;
  const size_t channels = scales.size();
  if (scheme == QScheme::PerChannelAffineFloatQParams) {
    q = Quantizer::per_channel_float_qparams(scales, zero_points, axis);
  } else {
    std::vector<int64_t> zps(channels);
    for (size_t c = 0; c < channels; ++c) {
      zps[c] = static_cast<int64_t>(zero_points[c]);
      EMBER_CHECK_T(ValueError, static_cast<double>(zps[c]) == zero_points[c], "[", op,
                    "] integer zero point expected, got ", zero_points[c]);
      check_params(scales[c], zps[c], dtype, op);
    }
    q = scheme == QScheme::PerChannelAffine ? Quantizer::per_channel(scales, zps, axis)
                                            : Quantizer::per_tensor(scales[0], zps[0]);
  }
  if (q->per_channel()) {
    axis = checked_axis(axis, static_cast<int64_t>(sizes.size()), op);
    EMBER_CHECK_T(ValueError, sizes[axis] == static_cast<int64_t>(channels), "[", op, "] ",
                  channels, " channels of parameters for axis ", axis, " of shape ",
                  shape_str(sizes));
  }
  Tensor out = empty_quantized(sizes, dtype, std::move(q), op);
  if (n > 0) std::memcpy(out.data_ptr(), values.data_ptr(), n * element_size(dtype));
  return out;
}

namespace {

Tensor relabel_as_quantized(const Tensor& ints, intrusive_ptr<Quantizer> quant, const char* op) {
  ScalarType dtype;
  switch (ints.dtype()) {
    case ScalarType::Int8:
      dtype = ScalarType::QInt8;
      break;
    case ScalarType::UInt8:
      dtype = ScalarType::QUInt8;
      break;
    case ScalarType::Int32:
      dtype = ScalarType::QInt32;
      break;
    default:
      EMBER_THROW(TypeError, "[", op, "] expected int8, uint8 or int32 integers, got ",
                  dtype_name(ints.dtype()));
  }
  const Tensor copy = contiguous(clone(ints));
  auto impl = make_intrusive<TensorImpl>(copy.storage(), dtype, copy.sizes(), copy.strides(),
                                         copy.storage_offset());
  impl->set_quantizer(std::move(quant));
  return Tensor(std::move(impl));
}

ScalarType quantized_type_of(ScalarType ints) {
  return ints == ScalarType::Int8    ? ScalarType::QInt8
         : ints == ScalarType::UInt8 ? ScalarType::QUInt8
                                     : ScalarType::QInt32;
}

}  // namespace

Tensor make_per_tensor_quantized(const Tensor& ints, double scale, int64_t zero_point) {
  const char* op = "_make_per_tensor_quantized_tensor";
  const Tensor out = relabel_as_quantized(ints, Quantizer::per_tensor(scale, zero_point), op);
  check_params(scale, zero_point, quantized_type_of(ints.dtype()), op);
  return out;
}

Tensor make_per_channel_quantized(const Tensor& ints, const std::vector<double>& scales,
                                  const std::vector<int64_t>& zero_points, int64_t axis) {
  const char* op = "_make_per_channel_quantized_tensor";
  axis = checked_axis(axis, ints.dim(), op);
  EMBER_CHECK_T(
      ValueError,
      static_cast<int64_t>(scales.size()) == ints.size(axis) && zero_points.size() == scales.size(),
      "[", op, "] ", scales.size(), " scales and ", zero_points.size(), " zero points for ",
      ints.size(axis), " channels");
  const Tensor out =
      relabel_as_quantized(ints, Quantizer::per_channel(scales, zero_points, axis), op);
  for (size_t c = 0; c < scales.size(); ++c) {
    check_params(scales[c], zero_points[c], out.dtype(), op);
  }
  return out;
}

}  // namespace native
}  // namespace ember
