// Public recurrent cells: lstm_cell, gru_cell, rnn_tanh_cell and rnn_relu_cell record their node
// when an input requires grad (api/nn/rnn.cpp); the pieces the derivatives use are the native
// functions.
#pragma once
#include <tuple>

#include "ops/nn/rnn.h"

namespace ember {

using native::cell_gates;
using native::CellKind;
using native::check_cell_args;
using native::gru_cell_forward;
using native::gru_cell_pointwise_backward;
using native::GruCellBackwardFn;
using native::GruCellFn;
using native::lstm_cell_forward;
using native::lstm_cell_pointwise_backward;
using native::LstmCellBackwardFn;
using native::LstmCellFn;
using native::rnn_cell_forward;
using native::rnn_cell_pointwise_backward;
using native::RnnCellBackwardFn;
using native::RnnCellFn;

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const Tensor& hx, const Tensor& cx,
                                     const Tensor& w_ih, const Tensor& w_hh,
                                     const Tensor& b_ih = {}, const Tensor& b_hh = {});
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih = {}, const Tensor& b_hh = {});
Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = {}, const Tensor& b_hh = {});
Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = {}, const Tensor& b_hh = {});

}  // namespace ember
