// Public creation ops (ops/creation.h): fill_ and zero_ record their node here (api/creation.cpp)
// and run the native op once; the factories are the native functions.
#pragma once
#include "ops/creation.h"

namespace ember {

using native::empty;
using native::empty_strided;
using native::full;
using native::ones;
using native::scalar_tensor;
using native::TensorOptions;
using native::wrap_scalar;
using native::zeros;
// Writes value into every element of t (fill_). Bumps t's version.
Tensor& fill_(Tensor& t, const Scalar& value);
Tensor& zero_(Tensor& t);
using native::fill_fresh;
using native::resize_output;
using native::zero_fresh;

}  // namespace ember
