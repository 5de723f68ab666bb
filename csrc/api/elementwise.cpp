// Public add / sub / mul / div: the autograd node when recording, else the native op.
#include "api/elementwise.h"

#include "autograd/derivatives/elementwise.h"
#include "autograd/variable.h"

namespace ember {

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha, const Tensor& out) {
  if (autograd::should_record(a, b)) return derivatives::add(a, b, alpha, out);
  return native::add(a, b, alpha, out);
}

Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha, const Tensor& out) {
  if (autograd::should_record(a, b)) return derivatives::sub(a, b, alpha, out);
  return native::sub(a, b, alpha, out);
}

Tensor mul(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (autograd::should_record(a, b)) return derivatives::mul(a, b, out);
  return native::mul(a, b, out);
}

Tensor div(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (autograd::should_record(a, b)) return derivatives::div(a, b, out);
  return native::div(a, b, out);
}

}  // namespace ember
