// Public where: the autograd node when recording, else the native op.
#include "api/compare.h"

#include "autograd/derivatives/elementwise.h"
#include "autograd/variable.h"

namespace ember {

Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y, const Tensor& out) {
  // The condition is not differentiable: only x and y decide whether to record.
  if (autograd::should_record(x, y)) return derivatives::where(cond, x, y, out);
  return native::where(cond, x, y, out);
}

}  // namespace ember
