// Dropout family: native_dropout (one fused kernel drawing the mask and scaling, PyTorch's
// torch.native_dropout), dropout / dropout_ (that kernel in training mode), and the composite
// feature (channel-wise) and alpha forms, all drawing from the default Philox generator.
#pragma once
#include "dispatch/tensor_iterator.h"
#include <optional>
#include <tuple>

#include "core/generator.h"
#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {

// out[i] = keep ? x[i] * scale : 0 and mask[i] = keep, keep with probability 1 - p drawn from
// Philox block i / 4 (word i % 4). out, mask and x are contiguous; out may be x.
using DropoutFn = void (*)(const Tensor& out, const Tensor& mask, const Tensor& x, double p,
                           double scale, PhiloxState st);
EMBER_DECLARE_STUB(dropout_stub, DropoutFn);
// out = mask ? grad * scale : 0 (operands out, grad, mask).
using DropoutBackwardFn = void (*)(TensorIterator& iter, double scale);
EMBER_DECLARE_STUB(dropout_backward_stub, DropoutBackwardFn);
constexpr int kDropoutValuesPerBlock = 4;

// (output, mask): train (or unset): output = input * mask / (1 - p) (0 when p = 1), mask a
// bool tensor; otherwise a copy of input and a mask of ones. `out` = input: in place.
std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train,
                                          const Tensor& out = {}, Generator* gen = nullptr);
// grad * mask * scale (one kernel; recorded: linear in grad).
Tensor native_dropout_backward(const Tensor& grad, const Tensor& mask, double scale);

// torch.dropout / dropout_: input itself when p == 0, not training or empty.
Tensor dropout(const Tensor& input, double p, bool train, bool inplace = false);
// Channel-wise: one draw per (N, C) entry, broadcast over the remaining dims.
Tensor feature_dropout(const Tensor& input, double p, bool train, bool inplace = false);
// SELU-preserving dropout: dropped values are set to -alpha * scale, then an affine map keeps
// mean 0 and variance 1.
Tensor alpha_dropout(const Tensor& input, double p, bool train, bool inplace = false);
Tensor feature_alpha_dropout(const Tensor& input, double p, bool train, bool inplace = false);

}  // namespace native
}  // namespace ember
