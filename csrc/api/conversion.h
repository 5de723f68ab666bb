// Public ops of ops/conversion.h that have no node of their own (the native functions).
#pragma once
#include "ops/conversion.h"

namespace ember {

using native::contains;
using native::ContainsFn;
using native::detach;
using native::empty_like;
using native::item;
using native::to;

}  // namespace ember
