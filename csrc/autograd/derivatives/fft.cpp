// Derivatives of the FFT primitives (ops/fft.h). Each transform is linear, so its gradient is the
// adjoint transform with the same normalisation: the DFT's adjoint is the unnormalised DFT of the
// other direction. The real transforms add the halving / doubling of their Hermitian half
// (Note [Adjoints of the real FFTs]). Written with the public ops, so they record under
// create_graph=True and every order of derivative follows.
//
// Note [Adjoints of the real FFTs]
// r2c keeps the first n / 2 + 1 outputs of a full DFT of real input: its adjoint pads the
// gradient with zeros back to n entries, runs the inverse complex transform and keeps the real
// part (the input is real). c2r reads entries 0..n / 2 of a Hermitian signal whose other entries
// are conjugate copies of 1..(n - 1) / 2, so those entries feed the output twice: its adjoint is
// the onesided r2c of the gradient with entries 1..n - n / 2 - 1 doubled.
#include "api/fft.h"
#include "api/complex.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/fft_derivatives.h"
#include "api/nn/sampling.h"
#include "api/views.h"
#include "autograd/record.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;
using native::FftNorm;

namespace {

// (0, 0) pairs for the dims after `dim`, then (0, extra) for `dim`: constant_pad_nd's layout.
std::vector<int64_t> pad_end(int64_t ndim, int64_t dim, int64_t extra) {
  std::vector<int64_t> pad(2 * (ndim - dim), 0);
  pad.back() = extra;
  return pad;
}

// A weight of 1 at entry 0 and 2 at entries 1..count of a dim of `len` entries, shaped to
// broadcast along dim of an ndim tensor.
Tensor doubling_weight(int64_t len, int64_t count, int64_t ndim, int64_t dim, ScalarType dtype) {
  Tensor t = ember::full({len}, 1.0, TensorOptions(dtype, Device()));
  auto fill = [&](auto* p) {
    for (int64_t i = 1; i <= count && i < len; ++i) p[i] = 2;
  };
  if (dtype == ScalarType::Float32) {
    fill(t.data<float>());
  } else {
    fill(t.data<double>());
  }
  std::vector<int64_t> shape(ndim, 1);
  shape[dim] = len;
  return ember::reshape(t, shape);
}

}  // namespace

Tensor fft_c2c(const Tensor& self, IntArrayRef dims, FftNorm norm, bool forward) {
  const std::vector<int64_t> d = dims.vec();
  auto node = autograd::new_node("FftC2CBackward0", {self},
                                 [d, norm, forward](FunctionNode&, const variable_list& g) {
                                   return variable_list{ember::fft_c2c(g[0], d, norm, !forward)};
                                 });
  return autograd::record(node, {self}, Tensor(), "_fft_c2c",
                          [&] { return native::fft_c2c(self, dims, norm, forward); });
}

Tensor fft_r2c(const Tensor& self, IntArrayRef dims, FftNorm norm, bool onesided) {
  const std::vector<int64_t> d = dims.vec();
  const int64_t n = self.size(d.back());
  const int64_t ndim = self.dim();
  auto node = autograd::new_node(
      "FftR2CBackward0", {self},
      [d, norm, onesided, n, ndim](FunctionNode&, const variable_list& g) {
        Tensor full = g[0];
        if (onesided && full.size(d.back()) < n) {
          full = ember::constant_pad_nd(full, pad_end(ndim, d.back(), n - full.size(d.back())));
        }
        return variable_list{ember::real(ember::fft_c2c(full, d, norm, /*forward=*/false))};
      });
  return autograd::record(node, {self}, Tensor(), "_fft_r2c",
                          [&] { return native::fft_r2c(self, dims, norm, onesided); });
}

Tensor fft_c2r(const Tensor& self, IntArrayRef dims, FftNorm norm, int64_t last_dim_size) {
  const std::vector<int64_t> d = dims.vec();
  const int64_t in_len = self.size(d.back());
  const int64_t ndim = self.dim();
  auto node = autograd::new_node(
      "FftC2RBackward0", {self},
      [d, norm, last_dim_size, in_len, ndim](FunctionNode&, const variable_list& g) {
        Tensor gi = ember::fft_r2c(g[0], d, norm, /*onesided=*/true);
        const int64_t half = gi.size(d.back());
        const int64_t doubled = last_dim_size - half;
        if (doubled > 0) {
          gi = ember::mul(gi, doubling_weight(half, doubled, ndim, d.back(), to_real(gi.dtype())));
        }
        if (in_len > half) gi = ember::constant_pad_nd(gi, pad_end(ndim, d.back(), in_len - half));
        return variable_list{gi};
      });
  return autograd::record(node, {self}, Tensor(), "_fft_c2r",
                          [&] { return native::fft_c2r(self, dims, norm, last_dim_size); });
}

}  // namespace derivatives
}  // namespace ember
