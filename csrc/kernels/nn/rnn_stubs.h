// Kernel stubs of the recurrent cells (ops/nn/rnn.h includes this header; the ops are
// ops/nn/rnn.cpp, the kernels kernels/cpu/nn/rnn_kernels.cpp): the fused pointwise part of each
// cell after its gate products, forward and backward. All tensors are contiguous, (B, k H)
// row-major.
#pragma once
#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {

// hy, cy (B, H) and workspace (B, 4H: sigmoid(i), sigmoid(f), tanh(g), sigmoid(o)) from the
// pre-activation gates igates + hgates (B, 4H) and cx (B, H).
using LstmCellFn = void (*)(const Tensor& hy, const Tensor& cy, const Tensor& workspace,
                            const Tensor& igates, const Tensor& hgates, const Tensor& cx);
// dgates (B, 4H, pre-activation) and dcx (B, H) from ghy / gcy (either undefined: zero).
using LstmCellBackwardFn = void (*)(const Tensor& dgates, const Tensor& dcx, const Tensor& ghy,
                                    const Tensor& gcy, const Tensor& workspace, const Tensor& cx,
                                    const Tensor& cy);
// hy (B, H) and workspace (B, 4H: r, z, n, gh_n) from igates, hgates (B, 3H) and hx.
using GruCellFn = void (*)(const Tensor& hy, const Tensor& workspace, const Tensor& igates,
                           const Tensor& hgates, const Tensor& hx);
// dgi, dgh (B, 3H, pre-activation) and dhx (B, H, the direct z * ghy term) from ghy.
using GruCellBackwardFn = void (*)(const Tensor& dgi, const Tensor& dgh, const Tensor& dhx,
                                   const Tensor& ghy, const Tensor& workspace, const Tensor& hx);
// hy = act(igates + hgates); backward: dgates = ghy * act'(from hy).
using RnnCellFn = void (*)(const Tensor& hy, const Tensor& igates, const Tensor& hgates, bool relu);
using RnnCellBackwardFn = void (*)(const Tensor& dgates, const Tensor& ghy, const Tensor& hy,
                                   bool relu);
EMBER_DECLARE_STUB(lstm_cell_stub, LstmCellFn);
EMBER_DECLARE_STUB(lstm_cell_backward_stub, LstmCellBackwardFn);
EMBER_DECLARE_STUB(gru_cell_stub, GruCellFn);
EMBER_DECLARE_STUB(gru_cell_backward_stub, GruCellBackwardFn);
EMBER_DECLARE_STUB(rnn_cell_stub, RnnCellFn);
EMBER_DECLARE_STUB(rnn_cell_backward_stub, RnnCellBackwardFn);

}  // namespace native
}  // namespace ember
