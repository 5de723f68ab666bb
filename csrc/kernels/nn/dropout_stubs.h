// Kernel stubs of the dropout family (ops/nn/dropout.h includes this header; the op is
// ops/nn/dropout.cpp, the kernels kernels/cpu/nn/dropout_kernels.cpp).
#pragma once
#include "core/generator.h"
#include "core/tensor.h"
#include "dispatch/stub.h"
#include "dispatch/tensor_iterator.h"

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
// Values drawn from one Philox block (four 32-bit words).
constexpr int kDropoutValuesPerBlock = 4;

}  // namespace native
}  // namespace ember
