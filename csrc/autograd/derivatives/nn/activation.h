// Derivatives of the activation ops (ops/nn/activation.h); see nn_activation.cpp.
#pragma once
#include <cstdint>

#include "api/nn/activation.h"
#include "core/tensor.h"

namespace ember {
namespace derivatives {

Tensor activation(Activation act, const Tensor& x, const ActivationArgs& args, const Tensor& out);
Tensor glu(const Tensor& x, int64_t dim, const Tensor& out);
Tensor prelu(const Tensor& x, const Tensor& weight);

}  // namespace derivatives
}  // namespace ember
