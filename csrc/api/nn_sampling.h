// Public ops of ops/nn_sampling.h that have no node of their own (the native functions).
#pragma once
#include "ops/nn_sampling.h"

namespace ember {

using native::constant_pad_nd;
using native::PadMode;
using native::pad_mode_name;
using native::index_pad;
using native::index_pad_backward;
using native::pad;
using native::UpsampleMode;
using native::upsample;
using native::upsample_backward;
using native::pixel_shuffle;
using native::pixel_unshuffle;

}  // namespace ember
