// Index-mapped padding (reflect / replicate / circular) and separable interpolation (nearest,
// linear, cubic), forward and backward. Parallel over the leading (batch * channel) planes; a
// backward plane belongs to one thread, so its scattered sums need no atomics. Interpolation
// and the backward sums accumulate in the dtype's accumulation type (float for 16-bit floats).
#include <algorithm>
#include <vector>

#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/wrap_acc.h"
#include "kernels/nn/sampling_stubs.h"

namespace ember {
namespace native {
namespace {

template <typename T>
using Acc = wrap_acc_t<T>;

int64_t plane_grain(int64_t plane_size) {
  return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(plane_size, 1));
}

void index_pad_kernel(const IndexMap& m, const Tensor& input, const Tensor& out) {
  const int64_t in_plane = m.in[0] * m.in[1] * m.in[2];
  const int64_t out_plane = m.out[0] * m.out[1] * m.out[2];
  if (out.numel() == 0) return;
  const int64_t planes = out.numel() / out_plane;
  dispatch_dtype<kAllTypes>(input.dtype(), "pad", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = input.data<T>();
    T* dst = out.data<T>();
    parallel_for(0, planes, plane_grain(out_plane), [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) {
        const T* s = src + p * in_plane;
        T* d = dst + p * out_plane;
        for (int64_t i = 0; i < m.out[0]; ++i) {
          const T* s0 = s + m.src[0][i] * m.in[1] * m.in[2];
          for (int64_t j = 0; j < m.out[1]; ++j) {
            const T* s1 = s0 + m.src[1][j] * m.in[2];
            const int64_t* cols = m.src[2].data();
            for (int64_t k = 0; k < m.out[2]; ++k) *d++ = s1[cols[k]];
          }
        }
      }
    });
  });
}

void index_pad_backward_kernel(const IndexMap& m, const Tensor& grad_output,
                               const Tensor& grad_input) {
  const int64_t in_plane = m.in[0] * m.in[1] * m.in[2];
  const int64_t out_plane = m.out[0] * m.out[1] * m.out[2];
  if (grad_input.numel() == 0) return;
  const int64_t planes = grad_input.numel() / in_plane;
  dispatch_dtype<kFloatingAndComplex>(grad_output.dtype(), "pad_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = Acc<T>;
    const T* src = grad_output.data<T>();
    T* dst = grad_input.data<T>();
    parallel_for(0, planes, plane_grain(out_plane), [&](int64_t lo, int64_t hi) {
      std::vector<A> acc(static_cast<size_t>(in_plane));
      for (int64_t p = lo; p < hi; ++p) {
        std::fill(acc.begin(), acc.end(), A(0));
        const T* g = src + p * out_plane;
        for (int64_t i = 0; i < m.out[0]; ++i) {
          A* a0 = acc.data() + m.src[0][i] * m.in[1] * m.in[2];
          for (int64_t j = 0; j < m.out[1]; ++j) {
            A* a1 = a0 + m.src[1][j] * m.in[2];
            const int64_t* cols = m.src[2].data();
            for (int64_t k = 0; k < m.out[2]; ++k) a1[cols[k]] += static_cast<A>(*g++);
          }
        }
        T* d = dst + p * in_plane;
        for (int64_t i = 0; i < in_plane; ++i) d[i] = static_cast<T>(acc[i]);
      }
    });
  });
}

// The per-dim tables in the accumulation type.
template <typename A>
struct TypedTables {
  std::vector<A> w[3];
  explicit TypedTables(const InterpTables& t) {
    for (int d = 0; d < 3; ++d) w[d].assign(t.w[d].begin(), t.w[d].end());
  }
};

void interp_kernel(const InterpTables& t, const Tensor& input, const Tensor& out) {
  const int64_t in_plane = t.in[0] * t.in[1] * t.in[2];
  const int64_t out_plane = t.out[0] * t.out[1] * t.out[2];
  if (out.numel() == 0) return;
  const int64_t planes = out.numel() / out_plane;
  dispatch_dtype<kFloatingTypes | kUInt8>(input.dtype(), "upsample", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = std::conditional_t<std::is_integral_v<T>, float, Acc<T>>;
    const TypedTables<A> tw(t);
    const T* src = input.data<T>();
    T* dst = out.data<T>();
    const int64_t t0 = t.taps[0], t1 = t.taps[1], t2 = t.taps[2];
    const int64_t s0 = t.in[1] * t.in[2], s1 = t.in[2];
    parallel_for(0, planes, plane_grain(out_plane * t0 * t1 * t2), [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) {
        const T* s = src + p * in_plane;
        T* d = dst + p * out_plane;
        for (int64_t i = 0; i < t.out[0]; ++i) {
          for (int64_t j = 0; j < t.out[1]; ++j) {
            for (int64_t k = 0; k < t.out[2]; ++k) {
              A v = 0;
              for (int64_t a = 0; a < t0; ++a) {
                const A wa = tw.w[0][i * t0 + a];
                const T* sa = s + t.idx[0][i * t0 + a] * s0;
                for (int64_t b = 0; b < t1; ++b) {
                  const A wab = wa * tw.w[1][j * t1 + b];
                  const T* sb = sa + t.idx[1][j * t1 + b] * s1;
                  for (int64_t c = 0; c < t2; ++c) {
                    v += wab * tw.w[2][k * t2 + c] * static_cast<A>(sb[t.idx[2][k * t2 + c]]);
                  }
                }
              }
              if constexpr (std::is_integral_v<T>) {
                *d++ = static_cast<T>(std::min<A>(std::max<A>(std::nearbyint(v), 0), 255));
              } else {
                *d++ = static_cast<T>(v);
              }
            }
          }
        }
      }
    });
  });
}

void interp_backward_kernel(const InterpTables& t, const Tensor& grad_output,
                            const Tensor& grad_input) {
  const int64_t in_plane = t.in[0] * t.in[1] * t.in[2];
  const int64_t out_plane = t.out[0] * t.out[1] * t.out[2];
  if (grad_input.numel() == 0) return;
  const int64_t planes = grad_input.numel() / in_plane;
  dispatch_dtype<kFloatingTypes>(grad_output.dtype(), "upsample_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = Acc<T>;
    const TypedTables<A> tw(t);
    const T* src = grad_output.data<T>();
    T* dst = grad_input.data<T>();
    const int64_t t0 = t.taps[0], t1 = t.taps[1], t2 = t.taps[2];
    const int64_t s0 = t.in[1] * t.in[2], s1 = t.in[2];
    parallel_for(0, planes, plane_grain(out_plane * t0 * t1 * t2), [&](int64_t lo, int64_t hi) {
      std::vector<A> acc(static_cast<size_t>(in_plane));
      for (int64_t p = lo; p < hi; ++p) {
        std::fill(acc.begin(), acc.end(), A(0));
        const T* g = src + p * out_plane;
        for (int64_t i = 0; i < t.out[0]; ++i) {
          for (int64_t j = 0; j < t.out[1]; ++j) {
            for (int64_t k = 0; k < t.out[2]; ++k) {
              const A gv = static_cast<A>(*g++);
              for (int64_t a = 0; a < t0; ++a) {
                const A wa = gv * tw.w[0][i * t0 + a];
                A* aa = acc.data() + t.idx[0][i * t0 + a] * s0;
                for (int64_t b = 0; b < t1; ++b) {
                  const A wab = wa * tw.w[1][j * t1 + b];
                  A* ab = aa + t.idx[1][j * t1 + b] * s1;
                  for (int64_t c = 0; c < t2; ++c) {
                    ab[t.idx[2][k * t2 + c]] += wab * tw.w[2][k * t2 + c];
                  }
                }
              }
            }
          }
        }
        T* d = dst + p * in_plane;
        for (int64_t i = 0; i < in_plane; ++i) d[i] = static_cast<T>(acc[i]);
      }
    });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(index_pad_stub, CPU, index_pad_kernel);
EMBER_REGISTER_KERNEL(index_pad_backward_stub, CPU, index_pad_backward_kernel);
EMBER_REGISTER_KERNEL(interp_stub, CPU, interp_kernel);
EMBER_REGISTER_KERNEL(interp_backward_stub, CPU, interp_backward_kernel);

}  // namespace native
}  // namespace ember
