// Public ops of ops/binary_ops.h that have no node of their own (the native functions).
#pragma once
#include "ops/binary_ops.h"

namespace ember {

using native::RoundingMode;
using native::parse_rounding_mode;
using native::div;
using native::floor_divide;
using native::remainder;
using native::fmod;
using native::pow;
using native::float_power;
using native::atan2;
using native::minimum;
using native::maximum;
using native::fmin;
using native::fmax;
using native::hypot;
using native::logaddexp;
using native::logaddexp2;
using native::xlogy;
using native::copysign;
using native::lerp;

}  // namespace ember
