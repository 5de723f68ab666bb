// Dropout family: native_dropout (one fused kernel drawing the mask and scaling, PyTorch's
// torch.native_dropout) and its backward. dropout / dropout_ (that kernel in training mode) and
// the composite feature (channel-wise) and alpha forms are in api/nn/dropout.cpp; all draw from
// the default Philox generator.
#pragma once
#include <optional>
#include <tuple>
#include "dispatch/tensor_iterator.h"

#include "core/generator.h"
#include "core/tensor.h"
#include "dispatch/stub.h"
#include "kernels/nn/dropout_stubs.h"

namespace ember {
namespace native {

// The kernel stubs (dropout_stub, dropout_backward_stub) are in kernels/nn/dropout_stubs.h.

// (output, mask): train (or unset): output = input * mask / (1 - p) (0 when p = 1), mask a
// bool tensor; otherwise a copy of input and a mask of ones. `out` = input: in place.
std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train,
                                          const Tensor& out = {}, Generator* gen = nullptr);
// grad * mask * scale (one kernel; the api layer records it: linear in grad).
Tensor native_dropout_backward(const Tensor& grad, const Tensor& mask, double scale);

// The argument checks of the dropout family (shared with the api layer's composite forms).
void check_dropout_probability(double p);
void check_dropout_input(const Tensor& t, const char* op);

}  // namespace native
}  // namespace ember
