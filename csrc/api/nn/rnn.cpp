// Public recurrent cells: the recording of lstm_cell, gru_cell and the plain RNN cells. The
// derivatives run the unchecked forward pieces, so the arguments are checked here first.
#include "api/nn/rnn.h"

#include "autograd/derivatives/nn/rnn.h"
#include "autograd/variable.h"

namespace ember {

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const Tensor& hx, const Tensor& cx,
                                     const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                                     const Tensor& b_hh) {
  if (autograd::should_record(input, hx, cx, w_ih, w_hh, b_ih, b_hh)) {
    native::check_cell_args(CellKind::Lstm, input, hx, cx, w_ih, w_hh, b_ih, b_hh);
    return derivatives::lstm_cell(input, hx, cx, w_ih, w_hh, b_ih, b_hh);
  }
  return native::lstm_cell(input, hx, cx, w_ih, w_hh, b_ih, b_hh);
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih, const Tensor& b_hh) {
  if (autograd::should_record(input, hx, w_ih, w_hh, b_ih, b_hh)) {
    native::check_cell_args(CellKind::Gru, input, hx, Tensor(), w_ih, w_hh, b_ih, b_hh);
    return derivatives::gru_cell(input, hx, w_ih, w_hh, b_ih, b_hh);
  }
  return native::gru_cell(input, hx, w_ih, w_hh, b_ih, b_hh);
}

Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  if (autograd::should_record(input, hx, w_ih, w_hh, b_ih, b_hh)) {
    native::check_cell_args(CellKind::RnnTanh, input, hx, Tensor(), w_ih, w_hh, b_ih, b_hh);
    return derivatives::rnn_cell(input, hx, w_ih, w_hh, b_ih, b_hh, /*relu=*/false);
  }
  return native::rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih, b_hh);
}

Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  if (autograd::should_record(input, hx, w_ih, w_hh, b_ih, b_hh)) {
    native::check_cell_args(CellKind::RnnRelu, input, hx, Tensor(), w_ih, w_hh, b_ih, b_hh);
    return derivatives::rnn_cell(input, hx, w_ih, w_hh, b_ih, b_hh, /*relu=*/true);
  }
  return native::rnn_relu_cell(input, hx, w_ih, w_hh, b_ih, b_hh);
}

}  // namespace ember
