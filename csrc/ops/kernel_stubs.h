// Kernel stubs shared by several op files. Op-family-specific stubs live in that family's header.
#pragma once
#include "dispatch/tensor_iterator.h"
#include "core/scalar.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {


using FillFn = void (*)(TensorIterator& iter, const Scalar& value);
EMBER_DECLARE_STUB(fill_stub, FillFn);

}  // namespace native
}  // namespace ember
