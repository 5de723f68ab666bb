// Public ops of ops/creation.h that have no node of their own (the native functions).
#pragma once
#include "ops/creation.h"

namespace ember {

using native::TensorOptions;
using native::empty;
using native::empty_strided;
using native::zeros;
using native::ones;
using native::full;
using native::scalar_tensor;
using native::wrap_scalar;
using native::fill_;
using native::zero_;
using native::fill_fresh;
using native::zero_fresh;
using native::resize_output;

}  // namespace ember
