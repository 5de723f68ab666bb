// im2col / col2im (the convolution fallback and F.unfold / F.fold) and the per-channel bias add.
// Parallel over (batch, channel) planes: each plane's columns, and each plane of col2im's
// output, belong to one thread, so col2im's accumulation needs no atomics.
#include <algorithm>
#include <cstring>

#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "kernels/nn/conv_stubs.h"

namespace ember {
namespace native {
namespace {

constexpr uint32_t kConvTypes = kAllTypes;

// The range of output positions o with 0 <= o * stride - pad + offset < in.
inline void valid_range(int64_t out, int64_t stride, int64_t pad, int64_t offset, int64_t in,
                        int64_t* lo, int64_t* hi) {
  // smallest o with o * stride >= pad - offset
  const int64_t a = pad - offset;
  int64_t l = a <= 0 ? 0 : (a + stride - 1) / stride;
  // largest o with o * stride <= in - 1 + pad - offset
  const int64_t b = in - 1 + pad - offset;
  int64_t h = b < 0 ? -1 : b / stride;
  *lo = std::min(l, out);
  *hi = std::max(std::min(h + 1, out), *lo);
}

template <typename T>
void im2col_plane(const Im2ColGeometry& g, const T* in, T* cols) {
  const int64_t ih = g.in[0], iw = g.in[1], oh = g.out[0], ow = g.out[1];
  const int64_t plane_out = oh * ow;
  for (int64_t ki = 0; ki < g.kernel[0]; ++ki) {
    int64_t h_lo, h_hi;
    valid_range(oh, g.stride[0], g.pad[0], ki * g.dilation[0], ih, &h_lo, &h_hi);
    for (int64_t kj = 0; kj < g.kernel[1]; ++kj) {
      T* row = cols + (ki * g.kernel[1] + kj) * plane_out;
      int64_t w_lo, w_hi;
      valid_range(ow, g.stride[1], g.pad[1], kj * g.dilation[1], iw, &w_lo, &w_hi);
      std::fill(row, row + h_lo * ow, T(0));
      std::fill(row + h_hi * ow, row + plane_out, T(0));
      for (int64_t y = h_lo; y < h_hi; ++y) {
        T* dst = row + y * ow;
        const T* src = in + (y * g.stride[0] - g.pad[0] + ki * g.dilation[0]) * iw - g.pad[1] +
                       kj * g.dilation[1];
        std::fill(dst, dst + w_lo, T(0));
        std::fill(dst + w_hi, dst + ow, T(0));
        if (g.stride[1] == 1) {
          std::copy(src + w_lo, src + w_hi, dst + w_lo);
        } else {
          const int64_t s = g.stride[1];
          for (int64_t x = w_lo; x < w_hi; ++x) dst[x] = src[x * s];
        }
      }
    }
  }
}

template <typename T>
void col2im_plane(const Im2ColGeometry& g, const T* cols, T* in) {
  const int64_t ih = g.in[0], iw = g.in[1], oh = g.out[0], ow = g.out[1];
  const int64_t plane_out = oh * ow;
  std::fill(in, in + ih * iw, T(0));
  for (int64_t ki = 0; ki < g.kernel[0]; ++ki) {
    int64_t h_lo, h_hi;
    valid_range(oh, g.stride[0], g.pad[0], ki * g.dilation[0], ih, &h_lo, &h_hi);
    for (int64_t kj = 0; kj < g.kernel[1]; ++kj) {
      const T* row = cols + (ki * g.kernel[1] + kj) * plane_out;
      int64_t w_lo, w_hi;
      valid_range(ow, g.stride[1], g.pad[1], kj * g.dilation[1], iw, &w_lo, &w_hi);
      for (int64_t y = h_lo; y < h_hi; ++y) {
        const T* src = row + y * ow;
        T* dst = in + (y * g.stride[0] - g.pad[0] + ki * g.dilation[0]) * iw - g.pad[1] +
                 kj * g.dilation[1];
        const int64_t s = g.stride[1];
        for (int64_t x = w_lo; x < w_hi; ++x) dst[x * s] = static_cast<T>(dst[x * s] + src[x]);
      }
    }
  }
}

void im2col_kernel(const Im2ColGeometry& g, const Tensor& input, const Tensor& cols) {
  const int64_t planes = input.numel() == 0 ? 0 : input.size(0) * g.channels;
  const int64_t in_plane = g.in[0] * g.in[1];
  const int64_t cols_plane = g.kernel[0] * g.kernel[1] * g.out[0] * g.out[1];
  if (planes == 0 || cols_plane == 0) return;
  dispatch_dtype<kConvTypes>(input.dtype(), "im2col", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = input.data<T>();
    T* out = cols.data<T>();
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(cols_plane, 1));
    parallel_for(0, planes, grain, [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) im2col_plane(g, in + p * in_plane, out + p * cols_plane);
    });
  });
}

void col2im_kernel(const Im2ColGeometry& g, const Tensor& cols, const Tensor& input) {
  const int64_t planes = input.numel() == 0 ? 0 : input.size(0) * g.channels;
  const int64_t in_plane = g.in[0] * g.in[1];
  const int64_t cols_plane = g.kernel[0] * g.kernel[1] * g.out[0] * g.out[1];
  if (planes == 0) return;
  dispatch_dtype<kConvTypes>(input.dtype(), "col2im", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = cols.data<T>();
    T* out = input.data<T>();
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(cols_plane, 1));
    parallel_for(0, planes, grain, [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) col2im_plane(g, src + p * cols_plane, out + p * in_plane);
    });
  });
}

void add_channel_bias_kernel(const Tensor& out, const Tensor& bias) {
  const int64_t n = out.size(0), c = out.size(1), l = out.size(2);
  if (out.numel() == 0) return;
  dispatch_dtype<kConvTypes>(out.dtype(), "add_channel_bias", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    const T* b = bias.data<T>();
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(l, 1));
    parallel_for(0, n * c, grain, [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) {
        const T v = b[p % c];
        T* row = o + p * l;
        for (int64_t i = 0; i < l; ++i) row[i] = static_cast<T>(row[i] + v);
      }
    });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(im2col_stub, CPU, im2col_kernel);
EMBER_REGISTER_KERNEL(col2im_stub, CPU, col2im_kernel);
EMBER_REGISTER_KERNEL(add_channel_bias_stub, CPU, add_channel_bias_kernel);

}  // namespace native
}  // namespace ember
