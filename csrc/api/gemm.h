// Public ops of ops/gemm.h that have no node of their own (the native functions).
#pragma once
#include "ops/gemm.h"

namespace ember {

using native::GemmMatrix;
using native::GemmParams;
using native::GemmFn;
using native::DotFn;
using native::CrossFn;
using native::CdistFn;
using native::CdistFinishFn;

}  // namespace ember
