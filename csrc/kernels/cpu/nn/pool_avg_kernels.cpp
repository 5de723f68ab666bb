// Average pooling (windowed and adaptive), forward and backward, with PyTorch's divisor rules
// (count_include_pad counts the padding inside the input-plus-padding area; divisor_override
// replaces the count). Sums run in the accumulation type (int64 for integers: integer
// division, as PyTorch). Parallel over planes.
#include <algorithm>
#include <type_traits>

#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "kernels/nn/pool_stubs.h"

namespace ember {
namespace native {
namespace {

int64_t plane_grain(int64_t work_per_plane) {
  return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(work_per_plane, 1));
}

// One window of a windowed average pool: its clipped bounds and divisor (0: empty window).
struct Window {
  int64_t h0, h1, w0, w1, divisor;
};

Window avg_window(const PoolGeometry& g, int64_t y, int64_t x) {
  int64_t h0 = y * g.stride[0] - g.pad[0], w0 = x * g.stride[1] - g.pad[1];
  int64_t h1 = std::min(h0 + g.kernel[0], g.in[0] + g.pad[0]);
  int64_t w1 = std::min(w0 + g.kernel[1], g.in[1] + g.pad[1]);
  const int64_t pool_size = (h1 - h0) * (w1 - w0);
  h0 = std::max<int64_t>(h0, 0);
  w0 = std::max<int64_t>(w0, 0);
  h1 = std::min(h1, g.in[0]);
  w1 = std::min(w1, g.in[1]);
  Window win{h0, h1, w0, w1, 0};
  if (h0 >= h1 || w0 >= w1) return win;
  win.divisor = g.divisor_override    ? g.divisor_override
                : g.count_include_pad ? pool_size
                                      : (h1 - h0) * (w1 - w0);
  return win;
}

void avg_pool2d_kernel(const PoolGeometry& g, const Tensor& input, const Tensor& out) {
  const int64_t in_plane = g.in[0] * g.in[1], out_plane = g.out[0] * g.out[1];
  if (g.planes == 0 || out_plane == 0) return;
  dispatch_dtype<kRealTypes>(input.dtype(), "avg_pool2d", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = std::conditional_t<std::is_integral_v<T>, int64_t, acc_type<T>>;
    const T* src = input.data<T>();
    T* dst = out.data<T>();
    const int64_t work = out_plane * g.kernel[0] * g.kernel[1];
    parallel_for(0, g.planes, plane_grain(work), [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) {
        const T* s = src + p * in_plane;
        T* d = dst + p * out_plane;
        for (int64_t y = 0; y < g.out[0]; ++y) {
          for (int64_t x = 0; x < g.out[1]; ++x) {
            const Window win = avg_window(g, y, x);
            if (win.divisor == 0) {
              d[y * g.out[1] + x] = T(0);
              continue;
            }
            A sum = 0;
            for (int64_t h = win.h0; h < win.h1; ++h) {
              for (int64_t w = win.w0; w < win.w1; ++w) sum += static_cast<A>(s[h * g.in[1] + w]);
            }
            d[y * g.out[1] + x] = static_cast<T>(sum / static_cast<A>(win.divisor));
          }
        }
      }
    });
  });
}

void avg_pool2d_backward_kernel(const PoolGeometry& g, const Tensor& grad_output,
                                const Tensor& grad_input) {
  const int64_t in_plane = g.in[0] * g.in[1], out_plane = g.out[0] * g.out[1];
  if (g.planes == 0 || in_plane == 0) return;
  dispatch_dtype<kFloatingTypes>(grad_output.dtype(), "avg_pool2d_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_type<T>;
    const T* src = grad_output.data<T>();
    T* dst = grad_input.data<T>();
    const int64_t work = out_plane * g.kernel[0] * g.kernel[1] + in_plane;
    parallel_for(0, g.planes, plane_grain(work), [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) {
        const T* gs = src + p * out_plane;
        T* d = dst + p * in_plane;
        std::fill(d, d + in_plane, T(0));
        for (int64_t y = 0; y < g.out[0]; ++y) {
          for (int64_t x = 0; x < g.out[1]; ++x) {
            const Window win = avg_window(g, y, x);
            if (win.divisor == 0) continue;
            const A v = static_cast<A>(gs[y * g.out[1] + x]) / static_cast<A>(win.divisor);
            for (int64_t h = win.h0; h < win.h1; ++h) {
              T* row = d + h * g.in[1];
              for (int64_t w = win.w0; w < win.w1; ++w) {
                row[w] = static_cast<T>(static_cast<A>(row[w]) + v);
              }
            }
          }
        }
      }
    });
  });
}

inline int64_t start_index(int64_t o, int64_t in, int64_t out) {
  return (o * in) / out;
}
inline int64_t end_index(int64_t o, int64_t in, int64_t out) {
  return ((o + 1) * in + out - 1) / out;
}

void adaptive_avg_pool2d_kernel(const PoolGeometry& g, const Tensor& input, const Tensor& out) {
  const int64_t ih = g.in[0], iw = g.in[1], oh = g.out[0], ow = g.out[1];
  const int64_t in_plane = ih * iw, out_plane = oh * ow;
  if (g.planes == 0 || out_plane == 0) return;
  dispatch_dtype<kFloatingTypes>(input.dtype(), "adaptive_avg_pool2d", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_type<T>;
    const T* src = input.data<T>();
    T* dst = out.data<T>();
    parallel_for(0, g.planes, plane_grain(in_plane + out_plane), [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) {
        const T* s = src + p * in_plane;
        for (int64_t y = 0; y < oh; ++y) {
          const int64_t h0 = start_index(y, ih, oh), h1 = end_index(y, ih, oh);
          for (int64_t x = 0; x < ow; ++x) {
            const int64_t w0 = start_index(x, iw, ow), w1 = end_index(x, iw, ow);
            A sum = 0;
            for (int64_t h = h0; h < h1; ++h) {
              for (int64_t w = w0; w < w1; ++w) sum += static_cast<A>(s[h * iw + w]);
            }
            dst[p * out_plane + y * ow + x] =
                static_cast<T>(sum / static_cast<A>((h1 - h0) * (w1 - w0)));
          }
        }
      }
    });
  });
}

void adaptive_avg_pool2d_backward_kernel(const PoolGeometry& g, const Tensor& grad_output,
                                         const Tensor& grad_input) {
  const int64_t ih = g.in[0], iw = g.in[1], oh = g.out[0], ow = g.out[1];
  const int64_t in_plane = ih * iw, out_plane = oh * ow;
  if (g.planes == 0 || in_plane == 0) return;
  dispatch_dtype<kFloatingTypes>(
      grad_output.dtype(), "adaptive_avg_pool2d_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        using A = acc_type<T>;
        const T* src = grad_output.data<T>();
        T* dst = grad_input.data<T>();
        parallel_for(0, g.planes, plane_grain(in_plane + out_plane), [&](int64_t lo, int64_t hi) {
          for (int64_t p = lo; p < hi; ++p) {
            T* d = dst + p * in_plane;
            std::fill(d, d + in_plane, T(0));
            for (int64_t y = 0; y < oh; ++y) {
              const int64_t h0 = start_index(y, ih, oh), h1 = end_index(y, ih, oh);
              for (int64_t x = 0; x < ow; ++x) {
                const int64_t w0 = start_index(x, iw, ow), w1 = end_index(x, iw, ow);
                const A v = static_cast<A>(src[p * out_plane + y * ow + x]) /
                            static_cast<A>((h1 - h0) * (w1 - w0));
                for (int64_t h = h0; h < h1; ++h) {
                  for (int64_t w = w0; w < w1; ++w) {
                    d[h * iw + w] = static_cast<T>(static_cast<A>(d[h * iw + w]) + v);
                  }
                }
              }
            }
          }
        });
      });
}

}  // namespace

EMBER_REGISTER_KERNEL(avg_pool2d_stub, CPU, avg_pool2d_kernel);
EMBER_REGISTER_KERNEL(avg_pool2d_backward_stub, CPU, avg_pool2d_backward_kernel);
EMBER_REGISTER_KERNEL(adaptive_avg_pool2d_stub, CPU, adaptive_avg_pool2d_kernel);
EMBER_REGISTER_KERNEL(adaptive_avg_pool2d_backward_stub, CPU, adaptive_avg_pool2d_backward_kernel);

}  // namespace native
}  // namespace ember
