// Memory-overlap checks for ops that write into caller-provided tensors (out=, in-place), with
// PyTorch's rules: a written-to tensor may not map two of its elements to one memory location
// (an expanded tensor), and an input may share memory with the output only as its exact alias or
// not at all. Otherwise the result would depend on the order the kernel visits elements.
#pragma once
#include "core/tensor.h"

namespace ember {

// RuntimeError when `t` certainly has internal overlap: a dim of size > 1 with stride 0. Other
// self-overlapping layouts (as_strided) are too costly to judge exactly and are let through, as
// in PyTorch.
void assert_no_internal_overlap(const Tensor& t, const char* op);

// RuntimeError when `in` partially overlaps `out`: both dense, sharing memory, and not the same
// elements in the same order. Exact aliases and disjoint tensors pass; non-dense layouts are
// let through.
void assert_no_partial_overlap(const Tensor& out, const Tensor& in, const char* op);

}  // namespace ember
