// Elementwise ops. Each public op validates, promotes and shapes through TensorIterator (see
// ops/elementwise_common.h), then calls its kernel stub.
#pragma once
#include "core/scalar.h"
#include "core/tensor.h"
#include "kernels/elementwise_stubs.h"  // add_stub, mul_stub, div_true_stub

namespace ember {
namespace native {

// `out` undefined: a new tensor is returned. Defined: the result goes there (out= / in-place).
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1, const Tensor& out = {});
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1, const Tensor& out = {});
Tensor mul(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor div(const Tensor& a, const Tensor& b, const Tensor& out = {});  // true division

}  // namespace native
}  // namespace ember
