// Public ops of ops/nn_rnn.h that have no node of their own (the native functions).
#pragma once
#include "ops/nn_rnn.h"

namespace ember {

using native::LstmCellFn;
using native::LstmCellBackwardFn;
using native::GruCellFn;
using native::GruCellBackwardFn;
using native::RnnCellFn;
using native::RnnCellBackwardFn;
using native::lstm_cell;
using native::gru_cell;
using native::rnn_tanh_cell;
using native::rnn_relu_cell;
using native::CellKind;
using native::check_cell_args;
using native::cell_gates;
using native::lstm_cell_forward;
using native::lstm_cell_pointwise_backward;
using native::gru_cell_forward;
using native::gru_cell_pointwise_backward;
using native::rnn_cell_forward;
using native::rnn_cell_pointwise_backward;

}  // namespace ember
