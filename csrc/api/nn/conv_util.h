// Public ops of ops/nn/conv_util.h that have no node of their own (the native functions).
#pragma once
#include "ops/nn/conv_util.h"

namespace ember {

using native::append_dims;
using native::dims_slice;
using native::expand_conv_param;
using native::sizes_list;

}  // namespace ember
