// Public ops of ops/elementwise.h that have no node of their own (the native functions).
#pragma once
#include "ops/elementwise.h"

namespace ember {

using native::IterFn;
using native::IterScalarFn;
using native::add;
using native::sub;
using native::mul;
using native::div;

}  // namespace ember
