// Public recurrent cells: the recording of lstm_cell, gru_cell and the plain RNN cells. The
// derivatives run the unchecked forward pieces, so the arguments are checked here first.
#include "api/nn/rnn.h"

#include <vector>

#include "api/autocast.h"
#include "api/elementwise.h"
#include "api/nn/linear.h"
#include "api/unary.h"
#include "api/views.h"
#include "autograd/derivatives/nn/rnn.h"
#include "autograd/variable.h"
#include "ops/creation.h"

namespace ember {

// Note [Autocast of the recurrent cells]: PyTorch's CPU cells are composites of linear (aten's
// RNN.cpp: SimpleCell, LSTMCell, GRUCell), and linear is on autocast's lower-precision list. So
// under autocast the two gate products run in the autocast dtype and the pointwise part in the
// dtype the gates and the incoming state meet in: rnn_tanh_cell and rnn_relu_cell give the
// autocast dtype; lstm_cell and gru_cell give the gates' dtype promoted with cx (LSTM) or hx
// (GRU), which is float32 for a float32 state. The plain cells are cast down and run fused. The
// fused LSTM and GRU kernels want one dtype for everything, so under autocast those two run as
// PyTorch's composites of recorded public ops; outside autocast all four stay single fused ops.

namespace {

using autocast::lower;

// Whether autocast casts any of the cell's tensors (all float64 or integer: nothing to do).
bool any_eligible(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts) {
    if (autocast::eligible(*t)) return true;
  }
  return false;
}

// A tensor of t's sizes and `dtype` over one element: check_cell_args checks the shapes and one
// dtype, while the autocast composite keeps the state in its own dtype.
Tensor shape_stand_in(const Tensor& t, ScalarType dtype) {
  if (!t.defined()) return t;
  return native::expand(native::scalar_tensor(Scalar(0.0), dtype), t.sizes());
}

// PyTorch's LSTMCell: gates = linear(hx) + linear(input), then the pointwise step with cx.
std::tuple<Tensor, Tensor> lstm_cell_autocast(const Tensor& input, const Tensor& hx,
                                              const Tensor& cx, const Tensor& w_ih,
                                              const Tensor& w_hh, const Tensor& b_ih,
                                              const Tensor& b_hh) {
  const Tensor x = lower(input), h = lower(hx), wi = lower(w_ih), wh = lower(w_hh),
               bi = lower(b_ih), bh = lower(b_hh);
  native::check_cell_args(CellKind::Lstm, x, h, shape_stand_in(cx, x.dtype()), wi, wh, bi, bh);
  autocast::ExcludeGuard no_autocast;
  const Tensor gates = ember::add(ember::linear(h, wh, bh), ember::linear(x, wi, bi));
  const std::vector<Tensor> g = ember::chunk(gates, 4, 1);
  const Tensor ingate = ember::sigmoid(g[0]), forgetgate = ember::sigmoid(g[1]),
               cellgate = ember::tanh(g[2]), outgate = ember::sigmoid(g[3]);
  const Tensor cy = ember::add(ember::mul(forgetgate, cx), ember::mul(ingate, cellgate));
  const Tensor hy = ember::mul(outgate, ember::tanh(cy));
  return {hy, cy};
}

// PyTorch's GRUCell: hy = (hx - n) * z + n with the gates from linear(input) and linear(hx).
Tensor gru_cell_autocast(const Tensor& input, const Tensor& hx, const Tensor& w_ih,
                         const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  const Tensor x = lower(input), h = lower(hx), wi = lower(w_ih), wh = lower(w_hh),
               bi = lower(b_ih), bh = lower(b_hh);
  native::check_cell_args(CellKind::Gru, x, h, Tensor(), wi, wh, bi, bh);
  autocast::ExcludeGuard no_autocast;
  const std::vector<Tensor> ig = ember::chunk(ember::linear(x, wi, bi), 3, 1);
  const std::vector<Tensor> hg = ember::chunk(ember::linear(h, wh, bh), 3, 1);
  const Tensor resetgate = ember::sigmoid(ember::add(hg[0], ig[0]));
  const Tensor inputgate = ember::sigmoid(ember::add(hg[1], ig[1]));
  const Tensor newgate = ember::tanh(ember::add(ig[2], ember::mul(hg[2], resetgate)));
  return ember::add(ember::mul(ember::sub(hx, newgate), inputgate), newgate);
}

}  // namespace

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const Tensor& hx, const Tensor& cx,
                                     const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                                     const Tensor& b_hh) {
  // autocast: gate products in lower precision (Note [Autocast of the recurrent cells])
  if (autocast::active() && any_eligible({&input, &hx, &w_ih, &w_hh, &b_ih, &b_hh})) {
    return lstm_cell_autocast(input, hx, cx, w_ih, w_hh, b_ih, b_hh);
  }
  if (autograd::should_record(input, hx, cx, w_ih, w_hh, b_ih, b_hh)) {
    native::check_cell_args(CellKind::Lstm, input, hx, cx, w_ih, w_hh, b_ih, b_hh);
    return derivatives::lstm_cell(input, hx, cx, w_ih, w_hh, b_ih, b_hh);
  }
  return native::lstm_cell(input, hx, cx, w_ih, w_hh, b_ih, b_hh);
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih, const Tensor& b_hh) {
  // autocast: gate products in lower precision (Note [Autocast of the recurrent cells])
  if (autocast::active() && any_eligible({&input, &hx, &w_ih, &w_hh, &b_ih, &b_hh})) {
    return gru_cell_autocast(input, hx, w_ih, w_hh, b_ih, b_hh);
  }
  if (autograd::should_record(input, hx, w_ih, w_hh, b_ih, b_hh)) {
    native::check_cell_args(CellKind::Gru, input, hx, Tensor(), w_ih, w_hh, b_ih, b_hh);
    return derivatives::gru_cell(input, hx, w_ih, w_hh, b_ih, b_hh);
  }
  return native::gru_cell(input, hx, w_ih, w_hh, b_ih, b_hh);
}

Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  if (autocast::active()) {  // autocast: lower precision (Note [Autocast of the recurrent cells])
    const Tensor x = lower(input), h = lower(hx), wi = lower(w_ih), wh = lower(w_hh),
                 bi = lower(b_ih), bh = lower(b_hh);
    autocast::ExcludeGuard no_autocast;
    return ember::rnn_tanh_cell(x, h, wi, wh, bi, bh);
  }
  if (autograd::should_record(input, hx, w_ih, w_hh, b_ih, b_hh)) {
    native::check_cell_args(CellKind::RnnTanh, input, hx, Tensor(), w_ih, w_hh, b_ih, b_hh);
    return derivatives::rnn_cell(input, hx, w_ih, w_hh, b_ih, b_hh, /*relu=*/false);
  }
  return native::rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih, b_hh);
}

Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  if (autocast::active()) {  // autocast: lower precision (Note [Autocast of the recurrent cells])
    const Tensor x = lower(input), h = lower(hx), wi = lower(w_ih), wh = lower(w_hh),
                 bi = lower(b_ih), bh = lower(b_hh);
    autocast::ExcludeGuard no_autocast;
    return ember::rnn_relu_cell(x, h, wi, wh, bi, bh);
  }
  if (autograd::should_record(input, hx, w_ih, w_hh, b_ih, b_hh)) {
    native::check_cell_args(CellKind::RnnRelu, input, hx, Tensor(), w_ih, w_hh, b_ih, b_hh);
    return derivatives::rnn_cell(input, hx, w_ih, w_hh, b_ih, b_hh, /*relu=*/true);
  }
  return native::rnn_relu_cell(input, hx, w_ih, w_hh, b_ih, b_hh);
}

}  // namespace ember
