// Public ops of ops/conversion.h that have no node of their own (the native functions).
#pragma once
#include "ops/conversion.h"

namespace ember {

using native::ContainsFn;
using native::empty_like;
using native::to;
using native::item;
using native::contains;
using native::detach;

}  // namespace ember
