// Kernel stubs of the view family (ops/views_shape.cpp calls conj_copy_stub).
#pragma once
#include "dispatch/stub.h"
#include "dispatch/tensor_iterator.h"

namespace ember {
namespace native {

// out = conj(in) for complex dtypes: Tensor.H / mH / adjoint() on complex tensors materialise the
// conjugate because Ember has no lazy conjugate bit.
using ConjCopyFn = void (*)(TensorIterator& iter);
EMBER_DECLARE_STUB(conj_copy_stub, ConjCopyFn);

}  // namespace native
}  // namespace ember
