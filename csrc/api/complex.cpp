// Public real / imag / conj: the autograd node when recording, else the native op.
#include "api/complex.h"

#include "autograd/derivatives/elementwise.h"
#include "autograd/variable.h"

namespace ember {

Tensor real(const Tensor& a) {
  if (!a.is_complex()) return a;  // no node: the input itself
  if (autograd::should_record(a)) return derivatives::real(a);
  return native::real(a);
}

Tensor imag(const Tensor& a) {
  if (autograd::should_record(a)) return derivatives::imag(a);
  return native::imag(a);
}

Tensor conj(const Tensor& a) {
  if (!a.is_complex()) return a;  // no node: the input itself
  if (autograd::should_record(a)) return derivatives::conj(a);
  return native::conj(a);
}

Tensor view_as_real(const Tensor& a) {
  if (autograd::should_record(a)) return derivatives::view_as_real(a);
  return native::view_as_real(a);
}

Tensor view_as_complex(const Tensor& a) {
  if (autograd::should_record(a)) return derivatives::view_as_complex(a);
  return native::view_as_complex(a);
}

}  // namespace ember
