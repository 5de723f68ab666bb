// Public complex and polar: recorded (autograd/derivatives/complex.cpp) when an input
// requires grad, else the native op.
#include "api/range_factories.h"

#include "api/autocast.h"
#include "autograd/derivatives/elementwise.h"
#include "autograd/variable.h"

namespace ember {

Tensor complex(const Tensor& real, const Tensor& imag, const Tensor& out) {
  if (autograd::should_record(real, imag)) return derivatives::complex(real, imag, out);
  return native::complex(real, imag, out);
}

Tensor polar(const Tensor& abs, const Tensor& angle, const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: float32
    const Tensor abs2 = autocast::to_fp32(abs), angle2 = autocast::to_fp32(angle);
    autocast::ExcludeGuard no_autocast;
    return ember::polar(abs2, angle2);
  }
  if (autograd::should_record(abs, angle)) return derivatives::polar(abs, angle, out);
  return native::polar(abs, angle, out);
}

}  // namespace ember
