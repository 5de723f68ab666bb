// Public ops of ops/nn_conv.h that have no node of their own (the native functions).
#pragma once
#include "ops/nn_conv.h"

namespace ember {

using native::ConvPadding;
using native::convolution;
using native::convolution_backward;
using native::conv1d;
using native::conv2d;
using native::conv_transpose1d;
using native::conv_transpose2d;
using native::linear;
using native::bilinear;
using native::im2col;
using native::col2im;

}  // namespace ember
