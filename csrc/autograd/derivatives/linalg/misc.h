// Derivatives of ember.linalg's matrix functions (ops/linalg/matrix_exp.cpp). The other
// functions of api/linalg/misc.h are composites whose pieces record themselves.
#pragma once
#include "core/tensor.h"

namespace ember {
namespace derivatives {

Tensor linalg_matrix_exp(const Tensor& A);

// PyTorch's linalg_matrix_exp_differential: the directional derivative of exp at A along G,
// the upper right block of exp([[A, G], [0, A]]); with adjoint, its adjoint (A replaced by A^H),
// which is the gradient G -> dL/dA.
Tensor matrix_exp_differential(const Tensor& A, const Tensor& G, bool adjoint);

}  // namespace derivatives
}  // namespace ember
