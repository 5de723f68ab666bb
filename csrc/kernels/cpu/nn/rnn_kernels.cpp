// Fused pointwise parts of the recurrent cells (ops/nn/rnn.h): everything between the gate
// products and the next step in one pass over the (batch, hidden) elements, parallel over rows.
// 16-bit dtypes compute in float.
#include <algorithm>

#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/vec_math.h"
#include "kernels/nn/rnn_stubs.h"

namespace ember {
namespace native {
namespace {

template <typename A>
inline A sigmoid(A x) {
  return vmath::sigmoid(x);
}
template <typename A>
inline A tanh_(A x) {
  return vmath::tanh(x);
}

// Runs f(b, j0, j1) over the rows b of a (batch, hidden) problem in parallel chunks of rows.
template <typename F>
void for_rows(int64_t batch, int64_t hidden, const F& f) {
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(8 * hidden, 1));
  parallel_for(0, batch, grain, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) f(b);
  });
}

void lstm_cell_kernel(const Tensor& hy, const Tensor& cy, const Tensor& workspace,
                      const Tensor& igates, const Tensor& hgates, const Tensor& cx) {
  dispatch_dtype<kFloatingTypes>(hy.dtype(), "lstm_cell", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_type<T>;
    const int64_t batch = hy.size(0), h = hy.size(1);
    const T* ig = igates.data<T>();
    const T* hg = hgates.data<T>();
    const T* c = cx.data<T>();
    T* ho = hy.data<T>();
    T* co = cy.data<T>();
    T* ws = workspace.data<T>();
    for_rows(batch, h, [&](int64_t b) {
      const T* gi = ig + b * 4 * h;
      const T* gh = hg + b * 4 * h;
      T* w = ws + b * 4 * h;
      for (int64_t j = 0; j < h; ++j) {
        const A i = sigmoid(A(gi[j]) + A(gh[j]));
        const A f = sigmoid(A(gi[h + j]) + A(gh[h + j]));
        const A g = tanh_(A(gi[2 * h + j]) + A(gh[2 * h + j]));
        const A o = sigmoid(A(gi[3 * h + j]) + A(gh[3 * h + j]));
        const A c_new = f * A(c[b * h + j]) + i * g;
        co[b * h + j] = T(c_new);
        ho[b * h + j] = T(o * tanh_(c_new));
        w[j] = T(i);
        w[h + j] = T(f);
        w[2 * h + j] = T(g);
        w[3 * h + j] = T(o);
      }
    });
  });
}

void lstm_cell_backward_kernel(const Tensor& dgates, const Tensor& dcx, const Tensor& ghy,
                               const Tensor& gcy, const Tensor& workspace, const Tensor& cx,
                               const Tensor& cy) {
  dispatch_dtype<kFloatingTypes>(dgates.dtype(), "lstm_cell_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_type<T>;
    const int64_t batch = dcx.size(0), h = dcx.size(1);
    const T* gh = ghy.defined() ? ghy.data<T>() : nullptr;
    const T* gc = gcy.defined() ? gcy.data<T>() : nullptr;
    const T* ws = workspace.data<T>();
    const T* c = cx.data<T>();
    const T* cn = cy.data<T>();
    T* dg = dgates.data<T>();
    T* dc = dcx.data<T>();
    for_rows(batch, h, [&](int64_t b) {
      const T* w = ws + b * 4 * h;
      T* d = dg + b * 4 * h;
      for (int64_t j = 0; j < h; ++j) {
        const int64_t k = b * h + j;
        const A i = A(w[j]), f = A(w[h + j]), g = A(w[2 * h + j]), o = A(w[3 * h + j]);
        const A tc = tanh_(A(cn[k]));
        const A g_h = gh ? A(gh[k]) : A(0);
        // dL/dc' sums the direct gradient and the one through h' = o tanh(c').
        const A g_c = (gc ? A(gc[k]) : A(0)) + g_h * o * (A(1) - tc * tc);
        d[j] = T(g_c * g * i * (A(1) - i));
        d[h + j] = T(g_c * A(c[k]) * f * (A(1) - f));
        d[2 * h + j] = T(g_c * i * (A(1) - g * g));
        d[3 * h + j] = T(g_h * tc * o * (A(1) - o));
        dc[k] = T(g_c * f);
      }
    });
  });
}

void gru_cell_kernel(const Tensor& hy, const Tensor& workspace, const Tensor& igates,
                     const Tensor& hgates, const Tensor& hx) {
  dispatch_dtype<kFloatingTypes>(hy.dtype(), "gru_cell", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_type<T>;
    const int64_t batch = hy.size(0), h = hy.size(1);
    const T* ig = igates.data<T>();
    const T* hg = hgates.data<T>();
    const T* hp = hx.data<T>();
    T* ho = hy.data<T>();
    T* ws = workspace.data<T>();
    for_rows(batch, h, [&](int64_t b) {
      const T* gi = ig + b * 3 * h;
      const T* gh = hg + b * 3 * h;
      T* w = ws + b * 4 * h;
      for (int64_t j = 0; j < h; ++j) {
        const A r = sigmoid(A(gi[j]) + A(gh[j]));
        const A z = sigmoid(A(gi[h + j]) + A(gh[h + j]));
        const A hn = A(gh[2 * h + j]);
        const A n = tanh_(A(gi[2 * h + j]) + r * hn);
        const A prev = A(hp[b * h + j]);
        ho[b * h + j] = T(n + z * (prev - n));
        w[j] = T(r);
        w[h + j] = T(z);
        w[2 * h + j] = T(n);
        w[3 * h + j] = T(hn);
      }
    });
  });
}

void gru_cell_backward_kernel(const Tensor& dgi, const Tensor& dgh, const Tensor& dhx,
                              const Tensor& ghy, const Tensor& workspace, const Tensor& hx) {
  dispatch_dtype<kFloatingTypes>(dgi.dtype(), "gru_cell_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_type<T>;
    const int64_t batch = dhx.size(0), h = dhx.size(1);
    const T* g = ghy.data<T>();
    const T* ws = workspace.data<T>();
    const T* hp = hx.data<T>();
    T* di = dgi.data<T>();
    T* dh = dgh.data<T>();
    T* dx = dhx.data<T>();
    for_rows(batch, h, [&](int64_t b) {
      const T* w = ws + b * 4 * h;
      T* d_i = di + b * 3 * h;
      T* d_h = dh + b * 3 * h;
      for (int64_t j = 0; j < h; ++j) {
        const int64_t k = b * h + j;
        const A r = A(w[j]), z = A(w[h + j]), n = A(w[2 * h + j]), hn = A(w[3 * h + j]);
        const A gk = A(g[k]);
        const A d_npre = gk * (A(1) - z) * (A(1) - n * n);
        const A d_zpre = gk * (A(hp[k]) - n) * z * (A(1) - z);
        const A d_rpre = d_npre * hn * r * (A(1) - r);
        d_i[j] = T(d_rpre);
        d_i[h + j] = T(d_zpre);
        d_i[2 * h + j] = T(d_npre);
        d_h[j] = T(d_rpre);
        d_h[h + j] = T(d_zpre);
        d_h[2 * h + j] = T(d_npre * r);
        dx[k] = T(gk * z);
      }
    });
  });
}

void rnn_cell_kernel(const Tensor& hy, const Tensor& igates, const Tensor& hgates, bool relu) {
  dispatch_dtype<kFloatingTypes>(hy.dtype(), relu ? "rnn_relu_cell" : "rnn_tanh_cell",
                                 [&](auto tag) {
                                   using T = typename decltype(tag)::type;
                                   using A = acc_type<T>;
                                   const int64_t n = hy.numel();
                                   const T* gi = igates.data<T>();
                                   const T* gh = hgates.data<T>();
                                   T* o = hy.data<T>();
                                   parallel_for(0, n, kGrainSize / 8, [&](int64_t lo, int64_t hi) {
                                     if (relu) {
                                       for (int64_t k = lo; k < hi; ++k) {
                                         const A x = A(gi[k]) + A(gh[k]);
                                         o[k] = T(x < A(0) ? A(0) : x);
                                       }
                                     } else {
                                       for (int64_t k = lo; k < hi; ++k)
                                         o[k] = T(tanh_(A(gi[k]) + A(gh[k])));
                                     }
                                   });
                                 });
}

void rnn_cell_backward_kernel(const Tensor& dgates, const Tensor& ghy, const Tensor& hy,
                              bool relu) {
  dispatch_dtype<kFloatingTypes>(dgates.dtype(), "rnn_cell_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_type<T>;
    const int64_t n = hy.numel();
    const T* g = ghy.data<T>();
    const T* y = hy.data<T>();
    T* d = dgates.data<T>();
    parallel_for(0, n, kGrainSize, [&](int64_t lo, int64_t hi) {
      for (int64_t k = lo; k < hi; ++k) {
        const A yk = A(y[k]);
        d[k] = relu ? (yk > A(0) ? g[k] : T(A(0))) : T(A(g[k]) * (A(1) - yk * yk));
      }
    });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(lstm_cell_stub, CPU, lstm_cell_kernel);
EMBER_REGISTER_KERNEL(lstm_cell_backward_stub, CPU, lstm_cell_backward_kernel);
EMBER_REGISTER_KERNEL(gru_cell_stub, CPU, gru_cell_kernel);
EMBER_REGISTER_KERNEL(gru_cell_backward_stub, CPU, gru_cell_backward_kernel);
EMBER_REGISTER_KERNEL(rnn_cell_stub, CPU, rnn_cell_kernel);
EMBER_REGISTER_KERNEL(rnn_cell_backward_stub, CPU, rnn_cell_backward_kernel);

}  // namespace native
}  // namespace ember
