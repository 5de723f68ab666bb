// Public dropout ops: native_dropout and its backward record their node when the input requires
// grad; dropout and the feature / alpha forms are composites of public ops (api/nn/dropout.cpp).
#pragma once
#include <optional>
#include <tuple>

#include "ops/nn/dropout.h"

namespace ember {

using native::DropoutBackwardFn;
using native::DropoutFn;

// (output, mask); see ops/nn/dropout.h. `out` = input: in place.
std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train,
                                          const Tensor& out = {}, Generator* gen = nullptr);
// grad * mask * scale (recorded: linear in grad).
Tensor native_dropout_backward(const Tensor& grad, const Tensor& mask, double scale);

// torch.dropout / dropout_: input itself when p == 0, not training or empty.
Tensor dropout(const Tensor& input, double p, bool train, bool inplace = false);
// Channel-wise: one draw per (N, C) entry, broadcast over the remaining dims.
Tensor feature_dropout(const Tensor& input, double p, bool train, bool inplace = false);
// SELU-preserving dropout: dropped values are set to -alpha * scale, then an affine map keeps
// mean 0 and variance 1.
Tensor alpha_dropout(const Tensor& input, double p, bool train, bool inplace = false);
Tensor feature_alpha_dropout(const Tensor& input, double p, bool train, bool inplace = false);

}  // namespace ember
