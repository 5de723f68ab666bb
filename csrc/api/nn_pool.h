// Public ops of ops/nn_pool.h that have no node of their own (the native functions).
#pragma once
#include "ops/nn_pool.h"

namespace ember {

using native::max_pool2d_with_indices;
using native::max_pool2d;
using native::max_pool1d_with_indices;
using native::max_pool1d;
using native::max_pool_backward;
using native::avg_pool2d;
using native::avg_pool2d_backward;
using native::avg_pool1d;
using native::adaptive_avg_pool2d;
using native::adaptive_avg_pool2d_backward;
using native::adaptive_avg_pool1d;
using native::adaptive_max_pool2d;
using native::adaptive_max_pool1d;

}  // namespace ember
