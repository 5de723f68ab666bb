// Elementwise ops. Each public op validates, promotes and shapes through TensorIterator (see
// ops/elementwise_common.h), then calls its kernel stub.
#pragma once
#include "dispatch/tensor_iterator.h"
#include "core/scalar.h"
#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {

using IterFn = void (*)(TensorIterator& iter);
using IterScalarFn = void (*)(TensorIterator& iter, const Scalar& s);

EMBER_DECLARE_STUB(add_stub, IterScalarFn);  // out = a + alpha * b
EMBER_DECLARE_STUB(mul_stub, IterFn);
EMBER_DECLARE_STUB(div_true_stub, IterFn);

// `out` undefined: a new tensor is returned. Defined: the result goes there (out= / in-place).
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1, const Tensor& out = {});
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1, const Tensor& out = {});
Tensor mul(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor div(const Tensor& a, const Tensor& b, const Tensor& out = {});  // true division

}  // namespace native
}  // namespace ember
