// Public ops of ops/views.h that have no node of their own (the native functions).
#pragma once
#include "ops/views.h"

namespace ember {

using native::alias;
using native::as_strided;
using native::view;
using native::reshape;
using native::flatten;
using native::transpose;
using native::permute;
using native::expand;
using native::squeeze;
using native::unsqueeze;
using native::select;
using native::narrow;
using native::narrow_copy;
using native::slice;
using native::unflatten;
using native::matrix_t;
using native::matrix_t_;
using native::numpy_T;
using native::mT;
using native::matrix_H;
using native::mH;
using native::adjoint;
using native::movedim;
using native::broadcast_to;
using native::broadcast_tensors;
using native::diagonal;
using native::unfold;
using native::unbind;
using native::split;
using native::split_with_sizes;
using native::chunk;
using native::tensor_split;
using native::tensor_split_indices;
using native::directional_split;
using native::directional_split_indices;
using native::compute_view_strides;
using native::contiguous;
using native::clone;
using native::to_dtype;
using native::copy_;

}  // namespace ember
