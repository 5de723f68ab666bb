// Max pooling (windowed and adaptive) and its backward scatter. Parallel over planes; NaN
// propagates (a NaN in a window is its maximum, as in PyTorch).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/wrap_acc.h"
#include "kernels/nn/pool_stubs.h"

namespace ember {
namespace native {
namespace {

int64_t plane_grain(int64_t work_per_plane) {
  return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(work_per_plane, 1));
}

template <typename T>
bool is_nan_value(T v) {
  if constexpr (std::is_integral_v<T>) {
    return false;
  } else {
    return v != v;  // NOLINT: NaN test on the comparison type (float or double)
  }
}

// The value type comparisons run in: float for 16-bit floats, the type itself otherwise.
template <typename T>
using Cmp = std::conditional_t<std::is_integral_v<T>, T, acc_type<T>>;

template <typename T>
Cmp<T> lowest() {
  if constexpr (std::is_integral_v<T>) {
    return std::numeric_limits<T>::lowest();
  } else {
    return -std::numeric_limits<Cmp<T>>::infinity();
  }
}

// The output positions o in [0, out) whose tap at `offset` (o * stride + offset) lies in
// [0, in): [*lo, *hi).
void tap_range(int64_t out, int64_t stride, int64_t offset, int64_t in, int64_t* lo, int64_t* hi) {
  int64_t l = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  int64_t h = in - 1 - offset < 0 ? -1 : (in - 1 - offset) / stride;
  *lo = std::min(l, out);
  *hi = std::max(std::min(h + 1, out), *lo);
}

// One kernel tap over a row of outputs: m[x] / bi[x] take src[x * stride] (flat index base +
// x * stride) where it is larger or NaN. Stride: the template constant, or `stride` when 0.
template <typename C, int kStride, typename T>
inline void update_row(const T* src, int64_t base, int64_t lo, int64_t hi, C* m, int64_t* bi,
                       int64_t stride = kStride) {
  const int64_t s = kStride ? kStride : stride;
  for (int64_t x = lo; x < hi; ++x) {
    const C v = static_cast<C>(src[x * s]);
    const bool take = v > m[x] || is_nan_value(v);
    m[x] = take ? v : m[x];
    bi[x] = take ? base + x * s : bi[x];
  }
}

// Windowed max pooling, one output row at a time: for every kernel tap the whole row of
// outputs is updated at once (a loop over x the compiler vectorizes), visiting taps in the
// window order PyTorch uses, so ties and NaNs resolve the same way (first maximum; a NaN always
// wins). The index starts at each window's first in-range element, as PyTorch's.
void max_pool2d_kernel(const PoolGeometry& g, const Tensor& input, const Tensor& out,
                       const Tensor& indices) {
  const int64_t ih = g.in[0], iw = g.in[1], oh = g.out[0], ow = g.out[1];
  const int64_t in_plane = ih * iw, out_plane = oh * ow;
  if (g.planes == 0 || out_plane == 0) return;
  // Taps from kh_n (kw_n) on land past the input for every window (the first window starts at
  // -pad), so they are never visited: a kernel far larger than the input (kernel_size 2^63 - 1
  // with ceil_mode still gives one output) costs the input's size, not the kernel's.
  const int64_t kh_n = std::min(g.kernel[0], (ih + g.pad[0] + g.dilation[0] - 1) / g.dilation[0]);
  const int64_t kw_n = std::min(g.kernel[1], (iw + g.pad[1] + g.dilation[1] - 1) / g.dilation[1]);
  // First in-range row / column of each window (the first tap at or after 0), and each column
  // tap's range of outputs.
  auto first_in_range = [](int64_t start, int64_t dilation) {
    return start >= 0 ? start : start + (-start + dilation - 1) / dilation * dilation;
  };
  std::vector<int64_t> first_h(oh), first_w(ow), x_lo(kw_n), x_hi(kw_n);
  for (int64_t y = 0; y < oh; ++y) {
    first_h[y] = first_in_range(y * g.stride[0] - g.pad[0], g.dilation[0]);
  }
  for (int64_t x = 0; x < ow; ++x) {
    first_w[x] = first_in_range(x * g.stride[1] - g.pad[1], g.dilation[1]);
  }
  for (int64_t kw = 0; kw < kw_n; ++kw) {
    tap_range(ow, g.stride[1], kw * g.dilation[1] - g.pad[1], iw, &x_lo[kw], &x_hi[kw]);
  }
  dispatch_dtype<kRealTypes>(input.dtype(), "max_pool2d", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = Cmp<T>;
    const T* src = input.data<T>();
    T* dst = out.data<T>();
    int64_t* idx = indices.defined() ? indices.data<int64_t>() : nullptr;
    const int64_t work = out_plane * kh_n * kw_n;
    const int64_t s1 = g.stride[1];
    parallel_for(0, g.planes, plane_grain(work), [&](int64_t lo, int64_t hi) {
      std::vector<C> best(static_cast<size_t>(ow));
      std::vector<int64_t> where(static_cast<size_t>(ow));
      C* m = best.data();
      int64_t* bi = where.data();
      for (int64_t p = lo; p < hi; ++p) {
        const T* s = src + p * in_plane;
        for (int64_t y = 0; y < oh; ++y) {
          for (int64_t x = 0; x < ow; ++x) {
            m[x] = lowest<T>();
            bi[x] = first_h[y] * iw + first_w[x];
          }
          for (int64_t kh = 0; kh < kh_n; ++kh) {
            const int64_t h = y * g.stride[0] - g.pad[0] + kh * g.dilation[0];
            if (h < 0 || h >= ih) continue;
            const T* row = s + h * iw;
            for (int64_t kw = 0; kw < kw_n; ++kw) {
              const int64_t off = kw * g.dilation[1] - g.pad[1];
              const int64_t base = h * iw + off;
              // Constant strides 1 and 2 (the common cases) let the compiler vectorize the loads.
              if (s1 == 2) {
                update_row<C, 2>(row + off, base, x_lo[kw], x_hi[kw], m, bi);
              } else if (s1 == 1) {
                update_row<C, 1>(row + off, base, x_lo[kw], x_hi[kw], m, bi);
              } else {
                update_row<C, 0>(row + off, base, x_lo[kw], x_hi[kw], m, bi, s1);
              }
            }
          }
          T* d = dst + p * out_plane + y * ow;
          for (int64_t x = 0; x < ow; ++x) d[x] = static_cast<T>(m[x]);
          if (idx) std::copy(bi, bi + ow, idx + p * out_plane + y * ow);
        }
      }
    });
  });
}

void adaptive_max_pool2d_kernel(const PoolGeometry& g, const Tensor& input, const Tensor& out,
                                const Tensor& indices) {
  const int64_t ih = g.in[0], iw = g.in[1], oh = g.out[0], ow = g.out[1];
  const int64_t in_plane = ih * iw, out_plane = oh * ow;
  if (g.planes == 0 || out_plane == 0) return;
  dispatch_dtype<kFloatingTypes>(input.dtype(), "adaptive_max_pool2d", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = Cmp<T>;
    const T* src = input.data<T>();
    T* dst = out.data<T>();
    int64_t* idx = indices.data<int64_t>();
    parallel_for(0, g.planes, plane_grain(in_plane + out_plane), [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) {
        const T* s = src + p * in_plane;
        for (int64_t y = 0; y < oh; ++y) {
          const int64_t h0 = (y * ih) / oh, h1 = ((y + 1) * ih + oh - 1) / oh;
          for (int64_t x = 0; x < ow; ++x) {
            const int64_t w0 = (x * iw) / ow, w1 = ((x + 1) * iw + ow - 1) / ow;
            int64_t best = h0 * iw + w0;
            C m = lowest<T>();
            for (int64_t h = h0; h < h1; ++h) {
              for (int64_t w = w0; w < w1; ++w) {
                const C v = static_cast<C>(s[h * iw + w]);
                if (v > m || is_nan_value(v)) {
                  m = v;
                  best = h * iw + w;
                }
              }
            }
            dst[p * out_plane + y * ow + x] = static_cast<T>(m);
            idx[p * out_plane + y * ow + x] = best;
          }
        }
      }
    });
  });
}

void max_pool_backward_kernel(const Tensor& grad_output, const Tensor& indices,
                              const Tensor& grad_input) {
  const int64_t planes = grad_input.size(0), in_plane = grad_input.size(1);
  const int64_t out_plane = grad_output.size(1);
  if (planes == 0 || in_plane == 0) return;
  dispatch_dtype<kFloatingTypes>(grad_output.dtype(), "max_pool_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_type<T>;
    const T* g = grad_output.data<T>();
    const int64_t* idx = indices.data<int64_t>();
    T* dst = grad_input.data<T>();
    parallel_for(0, planes, plane_grain(in_plane + out_plane), [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) {
        T* d = dst + p * in_plane;
        std::fill(d, d + in_plane, T(0));
        const T* gp = g + p * out_plane;
        const int64_t* ip = idx + p * out_plane;
        for (int64_t o = 0; o < out_plane; ++o) {
          const int64_t i = ip[o];
          EMBER_CHECK_T(IndexError, i >= 0 && i < in_plane, "[max_pool_backward] index ", i,
                        " is out of bounds for an input plane of ", in_plane, " elements");
          d[i] = static_cast<T>(static_cast<A>(d[i]) + static_cast<A>(gp[o]));
        }
      }
    });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(max_pool2d_stub, CPU, max_pool2d_kernel);
EMBER_REGISTER_KERNEL(adaptive_max_pool2d_stub, CPU, adaptive_max_pool2d_kernel);
EMBER_REGISTER_KERNEL(max_pool_backward_stub, CPU, max_pool_backward_kernel);

}  // namespace native
}  // namespace ember
