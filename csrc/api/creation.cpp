// Public fill_ and zero_: FillBackward0 / ZeroBackward0 (autograd/derivatives/views_copies.cpp)
// when t requires grad, else the native op.
#include "api/creation.h"

#include "autograd/derivatives/views.h"
#include "autograd/variable.h"

namespace ember {

Tensor& fill_(Tensor& t, const Scalar& value) {
  if (autograd::should_record(t)) return derivatives::fill_(t, value);
  return native::fill_(t, value);
}

Tensor& zero_(Tensor& t) {
  if (autograd::should_record(t)) return derivatives::zero_(t);
  return native::zero_(t);
}

}  // namespace ember
