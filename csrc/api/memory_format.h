// contiguous(memory_format=...) with autograd: the layout change is a permute, a contiguous copy
// and the permute back, each recorded (ops/memory_format.h has the formats themselves).
#pragma once
#include "core/tensor.h"
#include "ops/memory_format.h"

namespace ember {

// t itself when it already is contiguous in `format` (Preserve: always), else a copy that is.
// The channels-last formats need a 4-D (5-D) tensor (RuntimeError).
Tensor contiguous_as(const Tensor& t, native::MemoryFormat format);

}  // namespace ember
