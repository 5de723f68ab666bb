// Kernel stub of the conversion ops (ops/conversion.h includes this header; the op is
// ops/conversion.cpp, the kernel kernels/cpu/contains_kernel.cpp).
#pragma once
#include "dispatch/stub.h"
#include "dispatch/tensor_iterator.h"

namespace ember {
namespace native {

// `element in t`: inputs (haystack, needle) promoted to one dtype; true when any broadcast pair
// is equal.
using ContainsFn = bool (*)(TensorIterator& iter);
EMBER_DECLARE_STUB(contains_stub, ContainsFn);

}  // namespace native
}  // namespace ember
