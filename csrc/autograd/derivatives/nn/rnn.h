// Derivatives of the recurrent cells (ops/nn/rnn.h).
#pragma once
#include <tuple>

#include "core/tensor.h"

namespace ember {
namespace derivatives {

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const Tensor& hx, const Tensor& cx,
                                     const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                                     const Tensor& b_hh);
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih, const Tensor& b_hh);
Tensor rnn_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih, const Tensor& b_hh, bool relu);

}  // namespace derivatives
}  // namespace ember
