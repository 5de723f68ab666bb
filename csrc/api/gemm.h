// Public ops of ops/gemm.h that have no node of their own (the native functions).
#pragma once
#include "ops/gemm.h"

namespace ember {

using native::CdistFinishFn;
using native::CdistFn;
using native::CrossFn;
using native::DotFn;
using native::GemmFn;
using native::GemmMatrix;
using native::GemmParams;

}  // namespace ember
