#include "ops/quantized/elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "core/parallel.h"
#include "core/shape.h"
#include "kernels/quantized_stubs.h"
#include "ops/creation.h"
#include "ops/quantized/quantize.h"
#include "ops/views.h"

namespace ember {
namespace native {
namespace {

const Quantizer& quint8_per_tensor(const Tensor& t, const char* op) {
  EMBER_CHECK_T(TypeError, t.dtype() == ScalarType::QUInt8, "[", op,
                "] expected quint8 inputs, got ", dtype_name(t.dtype()),
                " (dequantize() for float arithmetic)");
  const Quantizer& q = quantizer_of(t, op);
  EMBER_CHECK(!q.per_channel(), "[", op, "] expected per-tensor quantized inputs");
  return q;
}

// The dims of t ordered by decreasing stride (ties keep their order): the memory order.
std::vector<int64_t> memory_order(const Tensor& t) {
  std::vector<int64_t> order(t.dim());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t x, int64_t y) { return t.stride(x) > t.stride(y); });
  return order;
}

// Whether t's elements fill one block of memory exactly once (contiguous up to a permutation
// of its dims, as a channels-last tensor).
bool dense(const Tensor& t) {
  int64_t expected = 1;
  const std::vector<int64_t> order = memory_order(t);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (t.size(*it) == 1) continue;
    if (t.stride(*it) != expected) return false;
    expected *= t.size(*it);
  }
  return true;
}

// A new quint8 tensor of t's shape laid out in t's memory order.
Tensor empty_quint8_like_layout(const Tensor& t, double scale, int64_t zero_point, const char* op) {
  const std::vector<int64_t> order = memory_order(t);
  DimVector sizes;
  for (int64_t d : order) sizes.push_back(t.size(d));
  Tensor block = empty_per_tensor_quantized(sizes, ScalarType::QUInt8, scale, zero_point, op);
  DimVector inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) inverse[order[i]] = static_cast<int64_t>(i);
  return permute(block, inverse);
}

// o[e] = max(o[e], s[e]): restrict and a local count let the compiler keep the loop in
// vector registers (byte pointers may alias anything otherwise).
template <typename T>
inline void max_into(T* __restrict o, const T* __restrict s, int64_t n) {
  for (int64_t e = 0; e < n; ++e) o[e] = o[e] < s[e] ? s[e] : o[e];
}

inline void add_into(int32_t* __restrict sums, const uint8_t* __restrict s, int64_t n) {
  for (int64_t e = 0; e < n; ++e) sums[e] += s[e];
}

Tensor binary(const Tensor& a, const Tensor& b, double scale, int64_t zero_point, bool relu,
              QuantizedBinaryOp kind, const char* op) {
  const Quantizer& qa = quint8_per_tensor(a, op);
  const Quantizer& qb = quint8_per_tensor(b, op);
  Tensor ia = quantized_storage_view(a), ib = quantized_storage_view(b);
  const bool same_layout = DimVector(a.sizes()) == DimVector(b.sizes()) &&
                           DimVector(a.strides()) == DimVector(b.strides()) && dense(a);
  if (!same_layout) {  // broadcast, then both contiguous
    const DimVector shape = broadcast_shapes(a.sizes(), b.sizes(), op);
    ia = contiguous(expand(ia, shape));
    ib = contiguous(expand(ib, shape));
  }
  Tensor out = empty_quint8_like_layout(ia, scale, zero_point, op);
  QuantizedBinaryArgs p;
  p.a = ia.data<uint8_t>();
  p.b = ib.data<uint8_t>();
  p.out = quantized_storage_view(out).data<uint8_t>();
  p.n = ia.numel();
  p.op = kind;
  p.a_scale = static_cast<float>(qa.scale());
  p.b_scale = static_cast<float>(qb.scale());
  p.a_zero_point = static_cast<int32_t>(qa.zero_point());
  p.b_zero_point = static_cast<int32_t>(qb.zero_point());
  p.out_inv_scale = 1.f / static_cast<float>(scale);
  p.out_zero_point = static_cast<int32_t>(zero_point);
  p.relu = relu;
  if (p.n > 0) quantized_binary_u8_stub(Device(), p);
  return out;
}

}  // namespace

Tensor quantized_add(const Tensor& a, const Tensor& b, double scale, int64_t zero_point,
                     bool relu) {
  return binary(a, b, scale, zero_point, relu, QuantizedBinaryOp::kAdd,
                relu ? "quantized::add_relu" : "quantized::add");
}

Tensor quantized_mul(const Tensor& a, const Tensor& b, double scale, int64_t zero_point,
                     bool relu) {
  return binary(a, b, scale, zero_point, relu, QuantizedBinaryOp::kMul,
                relu ? "quantized::mul_relu" : "quantized::mul");
}

Tensor quantized_max_pool2d(const Tensor& q, const int64_t (&kernel)[2], const int64_t (&stride)[2],
                            const int64_t (&padding)[2], const int64_t (&dilation)[2],
                            int64_t out_h, int64_t out_w) {
  const char* op = "quantized::max_pool2d";
  const Quantizer& quant = quantizer_of(q, op);
  EMBER_CHECK(!quant.per_channel(), "[", op, "] expected a per-tensor quantized input");
  const bool batched = q.dim() == 4;
  const Tensor x = batched ? q : unsqueeze(q, 0);
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  const Tensor xs = contiguous(permute(quantized_storage_view(x), {0, 2, 3, 1}));  // NHWC
  Tensor out = empty({n, out_h, out_w, c}, TensorOptions(xs.dtype()));
  const size_t width = static_cast<size_t>(xs.itemsize());
  const int64_t rows = n * out_h * out_w;
  auto pool = [&](auto tag) {
    using T = decltype(tag);
    const T* src = xs.data<T>();
    T* dst = out.data<T>();
    parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(c, 1)),
                 [&](int64_t r0, int64_t r1) {
                   for (int64_t r = r0; r < r1; ++r) {
                     const int64_t ow = r % out_w, oh = (r / out_w) % out_h,
                                   b = r / (out_w * out_h);
                     T* o = dst + r * c;
                     std::fill(o, o + c, std::numeric_limits<T>::lowest());
                     for (int64_t i = 0; i < kernel[0]; ++i) {
                       const int64_t ih = oh * stride[0] - padding[0] + i * dilation[0];
                       if (ih < 0 || ih >= h) continue;
                       for (int64_t j = 0; j < kernel[1]; ++j) {
                         const int64_t iw = ow * stride[1] - padding[1] + j * dilation[1];
                         if (iw < 0 || iw >= w) continue;
                         max_into(o, src + ((b * h + ih) * w + iw) * c, c);
                       }
                     }
                   }
                 });
  };
  if (width == 1 && xs.dtype() == ScalarType::UInt8) {
    pool(uint8_t{});
  } else if (width == 1) {
    pool(int8_t{});
  } else {
    pool(int32_t{});
  }
  Tensor y = relabel_quantized(permute(out, {0, 3, 1, 2}), q);
  return batched ? y : select(y, 0, 0);
}

Tensor quantized_adaptive_avg_pool2d(const Tensor& q, int64_t out_h, int64_t out_w) {
  const char* op = "quantized::adaptive_avg_pool2d";
  const Quantizer& quant = quantizer_of(q, op);
  EMBER_CHECK(!quant.per_channel() && q.dtype() == ScalarType::QUInt8, "[", op,
              "] expected a per-tensor quint8 input");
  const bool batched = q.dim() == 4;
  const Tensor x = batched ? q : unsqueeze(q, 0);
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  const Tensor xs = contiguous(permute(quantized_storage_view(x), {0, 2, 3, 1}));  // NHWC
  Tensor out = empty({n, out_h, out_w, c}, TensorOptions(ScalarType::UInt8));
  const uint8_t* src = xs.data<uint8_t>();
  uint8_t* dst = out.data<uint8_t>();
  const int32_t zp = static_cast<int32_t>(quant.zero_point());
  const int64_t rows = n * out_h * out_w;
  parallel_for(0, rows, 1, [&](int64_t r0, int64_t r1) {
    std::vector<int32_t> sums(c);
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t ow = r % out_w, oh = (r / out_w) % out_h, b = r / (out_w * out_h);
      const int64_t h0 = oh * h / out_h, h1 = ((oh + 1) * h + out_h - 1) / out_h;
      const int64_t w0 = ow * w / out_w, w1 = ((ow + 1) * w + out_w - 1) / out_w;
      std::fill(sums.begin(), sums.end(), 0);
      for (int64_t ih = h0; ih < h1; ++ih) {
        for (int64_t iw = w0; iw < w1; ++iw) {
          add_into(sums.data(), src + ((b * h + ih) * w + iw) * c, c);
        }
      }
      // The mean of (q - zp), rounded once, plus zp: the real mean requantized with the
      // input's own parameters (PyTorch's kernel).
      const int32_t count = static_cast<int32_t>((h1 - h0) * (w1 - w0));
      const float inv = 1.f / static_cast<float>(count);
      for (int64_t e = 0; e < c; ++e) {
        const float v = std::nearbyint(static_cast<float>(sums[e] - zp * count) * inv) + zp;
        dst[r * c + e] = static_cast<uint8_t>(std::min(std::max(v, 0.f), 255.f));
      }
    }
  });
  Tensor y = relabel_quantized(permute(out, {0, 3, 1, 2}), q);
  return batched ? y : select(y, 0, 0);
}

}  // namespace native
}  // namespace ember
