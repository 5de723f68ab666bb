// Public ops of ops/complex_ops.h that have no node of their own (the native functions).
#pragma once
#include "ops/complex_ops.h"

namespace ember {

using native::real;
using native::imag;
using native::conj;

}  // namespace ember
