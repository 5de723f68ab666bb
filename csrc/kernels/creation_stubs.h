// Kernel stubs of the creation ops (ops/creation.cpp): fill_stub, which the ops that fill a
// tensor with one value (fill_, zeros, ones, full, ...) share.
#pragma once
#include "core/scalar.h"
#include "dispatch/stub.h"
#include "dispatch/tensor_iterator.h"

namespace ember {
namespace native {

using FillFn = void (*)(TensorIterator& iter, const Scalar& value);
EMBER_DECLARE_STUB(fill_stub, FillFn);

}  // namespace native
}  // namespace ember
