// Public Tensor.to(): records ToCopyBackward0 (autograd/derivatives/conversion.cpp) when it
// converts a tensor that requires grad, else runs the native conversion.
#include "api/conversion.h"

#include "autograd/derivatives/conversion.h"
#include "autograd/variable.h"

namespace ember {

namespace {

// native::to's rule: a device without an index ("cpu", "cuda") matches the tensor's device of
// that type.
bool same_device(Device want, Device have) {
  return want.type == have.type &&
         (want.index < 0 || want.index == have.index || (want.is_cpu() && want.index <= 0));
}

}  // namespace

Tensor tensor_to(const Tensor& t, ScalarType dtype, Device device, bool copy,
                 bool preserve_strides) {
  // Nothing to convert: t itself, which records nothing (PyTorch's to() returns self).
  if (!copy && dtype == t.dtype() && same_device(device, t.device())) return t;
  if (autograd::should_record(t)) {
    return derivatives::to_copy(t, dtype, device, copy, preserve_strides);
  }
  return native::to(t, dtype, device, copy, preserve_strides);
}

}  // namespace ember
