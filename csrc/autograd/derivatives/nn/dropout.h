// Derivatives of the dropout ops (ops/nn/dropout.h).
#pragma once
#include <optional>
#include <tuple>

#include "core/generator.h"
#include "core/tensor.h"

namespace ember {
namespace derivatives {

std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train,
                                          const Tensor& out, Generator* gen);
Tensor native_dropout_backward(const Tensor& grad, const Tensor& mask, double scale);

}  // namespace derivatives
}  // namespace ember
