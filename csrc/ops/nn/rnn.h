// Recurrent cells (torch.rnn_tanh_cell, rnn_relu_cell, lstm_cell, gru_cell) as single ops with
// their own backward: the two gate products are matrix multiplications (addmm), everything
// after them is one fused pointwise kernel forward and one backward. PyTorch's gate layout:
//   LSTM: gates = x W_ih^T + b_ih + h W_hh^T + b_hh split as (i, f, g, o);
//         c' = sigmoid(f) c + sigmoid(i) tanh(g),  h' = sigmoid(o) tanh(c')
//   GRU:  gi = x W_ih^T + b_ih, gh = h W_hh^T + b_hh split as (r, z, n);
//         r = sigmoid(gi_r + gh_r), z = sigmoid(gi_z + gh_z), n = tanh(gi_n + r * gh_n),
//         h' = (1 - z) n + z h
//   RNN:  h' = tanh or relu(x W_ih^T + b_ih + h W_hh^T + b_hh)
// Inputs are 2-D (batch, features); biases may be undefined.
#pragma once
#include <tuple>

#include "core/tensor.h"
#include "dispatch/stub.h"
#include "kernels/nn/rnn_stubs.h"

namespace ember {
namespace native {

// The kernel stubs are in kernels/nn/rnn_stubs.h.

// ---- ops --------------------------------------------------------------------------------------
std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const Tensor& hx, const Tensor& cx,
                                     const Tensor& w_ih, const Tensor& w_hh,
                                     const Tensor& b_ih = {}, const Tensor& b_hh = {});
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih = {}, const Tensor& b_hh = {});
Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = {}, const Tensor& b_hh = {});
Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = {}, const Tensor& b_hh = {});

// ---- pieces shared with the derivatives (not recorded) ----------------------------------------
enum class CellKind { RnnTanh, RnnRelu, Lstm, Gru };
// Checks shapes and dtypes as PyTorch (RuntimeError naming the op).
void check_cell_args(CellKind kind, const Tensor& input, const Tensor& hx, const Tensor& cx,
                     const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                     const Tensor& b_hh);
// x W^T + b (b may be undefined), contiguous.
Tensor cell_gates(const Tensor& x, const Tensor& w, const Tensor& b);
// (hy, cy, workspace).
std::tuple<Tensor, Tensor, Tensor> lstm_cell_forward(const Tensor& input, const Tensor& hx,
                                                     const Tensor& cx, const Tensor& w_ih,
                                                     const Tensor& w_hh, const Tensor& b_ih,
                                                     const Tensor& b_hh);
// (dgates, dcx).
std::tuple<Tensor, Tensor> lstm_cell_pointwise_backward(const Tensor& ghy, const Tensor& gcy,
                                                        const Tensor& workspace, const Tensor& cx,
                                                        const Tensor& cy);
// (hy, workspace).
std::tuple<Tensor, Tensor> gru_cell_forward(const Tensor& input, const Tensor& hx,
                                            const Tensor& w_ih, const Tensor& w_hh,
                                            const Tensor& b_ih, const Tensor& b_hh);
// (dgi, dgh, dhx_direct).
std::tuple<Tensor, Tensor, Tensor> gru_cell_pointwise_backward(const Tensor& ghy,
                                                               const Tensor& workspace,
                                                               const Tensor& hx);
Tensor rnn_cell_forward(const Tensor& input, const Tensor& hx, const Tensor& w_ih,
                        const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh, bool relu);
Tensor rnn_cell_pointwise_backward(const Tensor& ghy, const Tensor& hy, bool relu);

}  // namespace native
}  // namespace ember
