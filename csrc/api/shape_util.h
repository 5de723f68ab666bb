// Public ops of ops/shape_util.h that have no node of their own (the native functions).
#pragma once
#include "ops/shape_util.h"

namespace ember {

using native::check_out_dtype;
using native::diagonal_view;
using native::finish_out;
using native::gather_slices;
using native::GatherSlicesFn;
using native::int64_tensor;
using native::torch_cpp_type_name;
using native::torch_shape_str;
using native::torch_type_name;

}  // namespace ember
