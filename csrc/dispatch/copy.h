// Elementwise copy with dtype conversion: the kernel under copy_, to(), contiguous() and the
// iterator's own casts. dst and src already have the same shape (src broadcast by the caller).
#pragma once
#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {

class TensorIterator;
using CopyFn = void (*)(TensorIterator& iter);
EMBER_DECLARE_STUB(copy_stub, CopyFn);

// dst <- src (broadcast, converting dtype). Bumps dst's version. Does not check overlap.
// bump_version=false is for tensors the op itself just allocated: nobody can observe them yet,
// and a fresh result starts at version 0 as in PyTorch.
void copy_into(const Tensor& dst, const Tensor& src, const char* op, bool bump_version = true);
// A new contiguous tensor of `dtype` holding src's values.
Tensor converted_copy(const Tensor& src, ScalarType dtype, const char* op);

}  // namespace ember
