// Derivative of Tensor.to() (api/conversion.cpp): ToCopyBackward0.
#pragma once
#include "core/device.h"
#include "core/dtype.h"
#include "core/tensor.h"

namespace ember {
namespace derivatives {

// native::to(t, dtype, device, copy, preserve_strides) with a ToCopyBackward0 node attached to
// a floating or complex result (an integer or bool result gets no history, as PyTorch's).
Tensor to_copy(const Tensor& t, ScalarType dtype, Device device, bool copy, bool preserve_strides);

}  // namespace derivatives
}  // namespace ember
