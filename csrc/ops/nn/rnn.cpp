// Recurrent cells (ops/nn/rnn.h): checks, the gate products and the fused pointwise kernels
// (kernels/cpu/nn/rnn_kernels.cpp); derivatives in derivatives/nn/rnn.cpp, recorded by
// api/nn/rnn.cpp.
#include "ops/nn/rnn.h"

#include "core/shape.h"
#include "ops/creation.h"
#include "ops/matmul.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(lstm_cell_stub, LstmCellFn);
EMBER_DEFINE_STUB(lstm_cell_backward_stub, LstmCellBackwardFn);
EMBER_DEFINE_STUB(gru_cell_stub, GruCellFn);
EMBER_DEFINE_STUB(gru_cell_backward_stub, GruCellBackwardFn);
EMBER_DEFINE_STUB(rnn_cell_stub, RnnCellFn);
EMBER_DEFINE_STUB(rnn_cell_backward_stub, RnnCellBackwardFn);

namespace {

const char* cell_name(CellKind kind) {
  switch (kind) {
    case CellKind::RnnTanh:
      return "rnn_tanh_cell";
    case CellKind::RnnRelu:
      return "rnn_relu_cell";
    case CellKind::Lstm:
      return "lstm_cell";
    case CellKind::Gru:
      return "gru_cell";
  }
  return "rnn_cell";
}

int64_t gate_count(CellKind kind) {
  return kind == CellKind::Lstm ? 4 : kind == CellKind::Gru ? 3 : 1;
}

Tensor contiguous_like(const Tensor& t) {
  return t.is_contiguous() ? t : contiguous(t);
}

TensorOptions options_of(const Tensor& t) {
  return TensorOptions(t.dtype(), t.device());
}

}  // namespace

void check_cell_args(CellKind kind, const Tensor& input, const Tensor& hx, const Tensor& cx,
                     const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                     const Tensor& b_hh) {
  const char* op = cell_name(kind);
  EMBER_CHECK(input.dim() == 2, "[", op, "] Expected 2D input (batch x feature), but got ",
              input.dim(), "D input");
  EMBER_CHECK(w_ih.dim() == 2 && w_hh.dim() == 2, "[", op,
              "] expected 2-D weights, got w_ih of "
              "shape ",
              shape_str(w_ih.sizes()), " and w_hh of shape ", shape_str(w_hh.sizes()));
  const int64_t gates = gate_count(kind);
  // The hidden state's size is w_hh's columns. An LSTM may project its hidden state (proj_size,
  // used by the sequence functions): then the cell state has w_hh.size(0) / 4 features instead.
  const int64_t hidden = w_hh.size(1);
  const int64_t cell_size = kind == CellKind::Lstm ? w_hh.size(0) / 4 : hidden;
  const bool rows_ok = kind == CellKind::Lstm ? w_hh.size(0) % 4 == 0 && w_hh.size(0) >= hidden
                                              : w_hh.size(0) == gates * hidden;
  EMBER_CHECK(rows_ok && w_ih.size(0) == w_hh.size(0), "[", op, "] expected w_ih and w_hh with ",
              gates, " * hidden_size = ", gates * cell_size, " rows, got w_ih of shape ",
              shape_str(w_ih.sizes()), " and w_hh of shape ", shape_str(w_hh.sizes()));
  EMBER_CHECK(input.size(1) == w_ih.size(1), "[", op, "] input has inconsistent input_size: got ",
              input.size(1), " expected ", w_ih.size(1));
  auto check_hidden = [&](const Tensor& h, int label, int64_t expected) {
    EMBER_CHECK(h.dim() == 2, "[", op, "] Expected 2D hidden", label, " (batch x hidden), but got ",
                h.dim(), "D");
    EMBER_CHECK(h.size(0) == input.size(0), "[", op, "] Input batch size ", input.size(0),
                " doesn't match hidden", label, " batch size ", h.size(0));
    EMBER_CHECK(h.size(1) == expected, "[", op, "] hidden", label,
                " has inconsistent hidden_size: got ", h.size(1), ", expected ", expected);
  };
  check_hidden(hx, 0, hidden);
  if (kind == CellKind::Lstm) check_hidden(cx, 1, cell_size);
  for (const Tensor* b : {&b_ih, &b_hh}) {
    if (!b->defined()) continue;
    EMBER_CHECK(b->dim() == 1 && b->size(0) == w_hh.size(0), "[", op,
                "] expected biases of "
                "shape (",
                w_hh.size(0), "), got ", shape_str(b->sizes()));
  }
  const ScalarType t = input.dtype();
  EMBER_CHECK(is_floating(t), "[", op, "] expected a floating point input, got ", dtype_name(t));
  for (const Tensor* x : {&hx, &cx, &w_ih, &w_hh, &b_ih, &b_hh}) {
    if (!x->defined()) continue;
    EMBER_CHECK(x->dtype() == t, "[", op,
                "] expected input, hidden states, weights and biases "
                "of one dtype, got input ",
                dtype_name(t), " and ", dtype_name(x->dtype()));
  }
}

Tensor cell_gates(const Tensor& x, const Tensor& w, const Tensor& b) {
  const Tensor wt = transpose(w, 0, 1);
  return contiguous_like(b.defined() ? addmm(b, x, wt) : mm(x, wt));
}

// ---- LSTM
// -----------------------------------------------------------------------------------------

std::tuple<Tensor, Tensor, Tensor> lstm_cell_forward(const Tensor& input, const Tensor& hx,
                                                     const Tensor& cx, const Tensor& w_ih,
                                                     const Tensor& w_hh, const Tensor& b_ih,
                                                     const Tensor& b_hh) {
  const Tensor igates = cell_gates(input, w_ih, b_ih);
  const Tensor hgates = cell_gates(hx, w_hh, b_hh);
  const int64_t batch = input.size(0), hidden = w_hh.size(0) / 4;
  Tensor hy = empty({batch, hidden}, options_of(input));
  Tensor cy = empty({batch, hidden}, options_of(input));
  Tensor workspace = empty({batch, 4 * hidden}, options_of(input));
  if (hy.numel() > 0) {
    lstm_cell_stub(input.device(), hy, cy, workspace, igates, hgates, contiguous_like(cx));
  }
  return {hy, cy, workspace};
}

std::tuple<Tensor, Tensor> lstm_cell_pointwise_backward(const Tensor& ghy, const Tensor& gcy,
                                                        const Tensor& workspace, const Tensor& cx,
                                                        const Tensor& cy) {
  Tensor dgates = empty(workspace.sizes(), options_of(workspace));
  Tensor dcx = empty(cy.sizes(), options_of(cy));
  if (dcx.numel() > 0) {
    lstm_cell_backward_stub(
        workspace.device(), dgates, dcx, ghy.defined() ? contiguous_like(ghy) : Tensor(),
        gcy.defined() ? contiguous_like(gcy) : Tensor(), workspace, contiguous_like(cx), cy);
  }
  return {dgates, dcx};
}

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const Tensor& hx, const Tensor& cx,
                                     const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                                     const Tensor& b_hh) {
  check_cell_args(CellKind::Lstm, input, hx, cx, w_ih, w_hh, b_ih, b_hh);
  auto [hy, cy, workspace] = lstm_cell_forward(input, hx, cx, w_ih, w_hh, b_ih, b_hh);
  return {hy, cy};
}

// ---- GRU
// ------------------------------------------------------------------------------------------

std::tuple<Tensor, Tensor> gru_cell_forward(const Tensor& input, const Tensor& hx,
                                            const Tensor& w_ih, const Tensor& w_hh,
                                            const Tensor& b_ih, const Tensor& b_hh) {
  const Tensor igates = cell_gates(input, w_ih, b_ih);
  const Tensor hgates = cell_gates(hx, w_hh, b_hh);
  const int64_t batch = input.size(0), hidden = w_hh.size(1);
  Tensor hy = empty({batch, hidden}, options_of(input));
  Tensor workspace = empty({batch, 4 * hidden}, options_of(input));
  if (hy.numel() > 0) {
    gru_cell_stub(input.device(), hy, workspace, igates, hgates, contiguous_like(hx));
  }
  return {hy, workspace};
}

std::tuple<Tensor, Tensor, Tensor> gru_cell_pointwise_backward(const Tensor& ghy,
                                                               const Tensor& workspace,
                                                               const Tensor& hx) {
  const int64_t batch = hx.size(0), hidden = hx.size(1);
  Tensor dgi = empty({batch, 3 * hidden}, options_of(workspace));
  Tensor dgh = empty({batch, 3 * hidden}, options_of(workspace));
  Tensor dhx = empty({batch, hidden}, options_of(workspace));
  if (dhx.numel() > 0) {
    gru_cell_backward_stub(workspace.device(), dgi, dgh, dhx, contiguous_like(ghy), workspace,
                           contiguous_like(hx));
  }
  return {dgi, dgh, dhx};
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih, const Tensor& b_hh) {
  check_cell_args(CellKind::Gru, input, hx, Tensor(), w_ih, w_hh, b_ih, b_hh);
  return std::get<0>(gru_cell_forward(input, hx, w_ih, w_hh, b_ih, b_hh));
}

// ---- plain RNN
// ------------------------------------------------------------------------------------

Tensor rnn_cell_forward(const Tensor& input, const Tensor& hx, const Tensor& w_ih,
                        const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh, bool relu) {
  const Tensor igates = cell_gates(input, w_ih, b_ih);
  const Tensor hgates = cell_gates(hx, w_hh, b_hh);
  Tensor hy = empty({input.size(0), w_hh.size(1)}, options_of(input));
  if (hy.numel() > 0) rnn_cell_stub(input.device(), hy, igates, hgates, relu);
  return hy;
}

Tensor rnn_cell_pointwise_backward(const Tensor& ghy, const Tensor& hy, bool relu) {
  Tensor dgates = empty(hy.sizes(), options_of(hy));
  if (dgates.numel() > 0) {
    rnn_cell_backward_stub(hy.device(), dgates, contiguous_like(ghy), contiguous_like(hy), relu);
  }
  return dgates;
}

namespace {
Tensor rnn_cell(CellKind kind, const Tensor& input, const Tensor& hx, const Tensor& w_ih,
                const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  check_cell_args(kind, input, hx, Tensor(), w_ih, w_hh, b_ih, b_hh);
  return rnn_cell_forward(input, hx, w_ih, w_hh, b_ih, b_hh, kind == CellKind::RnnRelu);
}
}  // namespace

Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  return rnn_cell(CellKind::RnnTanh, input, hx, w_ih, w_hh, b_ih, b_hh);
}

Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  return rnn_cell(CellKind::RnnRelu, input, hx, w_ih, w_hh, b_ih, b_hh);
}

}  // namespace native
}  // namespace ember
