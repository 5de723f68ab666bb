// Derivatives of softmax and log_softmax (ops/nn/softmax.cpp): first-order backward is the fused
// softmax_backward_data kernel; under create_graph=True the same formula is evaluated with public
// ops (Note [Fused backward, composite double backward] in nn_norm.cpp).
#pragma once
#include "core/dtype.h"
#include "core/tensor.h"

namespace ember {
namespace derivatives {

// log_softmax when `log`.
Tensor softmax(const Tensor& x, int64_t dim, ScalarType dtype, bool log);

}  // namespace derivatives
}  // namespace ember
