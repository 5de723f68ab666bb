// Pointwise activation functions of torch.nn.functional (relu, gelu, elu, softplus, ...), glu
// and prelu. Each pointwise activation is one fused kernel forward and one fused kernel backward
// (grad * f'(x)), selected by `Activation` so that a single stub pair serves the whole family.
//
// The named activations (relu, gelu, ...) are forms of `activation`, defined in the api layer
// (api/nn/activation.h). Every op takes an optional `out`: undefined returns a new tensor, the
// input itself is the in-place form (relu_, elu_, ...), any other tensor is out=.
#pragma once
#include <cstdint>
#include <tuple>
#include "dispatch/tensor_iterator.h"

#include "core/tensor.h"
#include "dispatch/stub.h"
#include "kernels/nn/activation_stubs.h"

namespace ember {
namespace native {

// Activation, ActivationArgs, activation_name and the activation stubs are in
// kernels/nn/activation_stubs.h.

// Whether f' is piecewise constant (relu, hardtanh, ...): the second derivative is zero, so the
// backward needs no graph of its own through x.
bool is_piecewise_linear(Activation act);

// The generic form (not recorded: the api layer records it).
Tensor activation(Activation act, const Tensor& x, const ActivationArgs& args,
                  const Tensor& out = {});
// grad * f'(x) by the fused backward kernel; not recorded (see Note [Activation double backward]
// in derivatives/nn/activation.cpp). relu is given its result instead of x.
Tensor activation_backward(Activation act, const Tensor& grad, const Tensor& x,
                           const ActivationArgs& args);

// glu(x, dim) = a * sigmoid(b) with (a, b) the two halves of x along dim.
Tensor glu(const Tensor& x, int64_t dim = -1, const Tensor& out = {});
// glu's halving dim, checked and wrapped (its node keeps it).
int64_t glu_dim(const Tensor& x, int64_t dim);
// grad of glu with respect to x (one fused kernel), not recorded.
Tensor glu_backward(const Tensor& grad, const Tensor& x, int64_t dim);

// prelu(x, weight): x > 0 ? x : w * x, weight of one element or one per channel (dim 1).
Tensor prelu(const Tensor& x, const Tensor& weight);
// The weight reshaped to broadcast against x: (1, C, 1, ..., 1) for inputs of 2 or more dims.
Tensor prelu_weight_view(const Tensor& x, const Tensor& weight);
// That shape.
DimVector prelu_weight_shape(const Tensor& x, const Tensor& weight);
// (grad_x, grad_weight) by one fused kernel and a sum; not recorded.
std::tuple<Tensor, Tensor> prelu_backward(const Tensor& grad, const Tensor& x,
                                          const Tensor& weight);

}  // namespace native
}  // namespace ember
