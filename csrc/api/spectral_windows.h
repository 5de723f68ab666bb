// Public window functions: not differentiable, so the native functions themselves
// (ops/spectral_windows.h).
#pragma once
#include "ops/spectral_windows.h"

namespace ember {

using native::spectral_window;
using native::WindowKind;

}  // namespace ember
