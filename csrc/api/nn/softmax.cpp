// Public softmax ops: the recording of softmax and log_softmax.
#include "api/nn/softmax.h"

#include "autograd/derivatives/nn/softmax.h"
#include "autograd/variable.h"

namespace ember {

Tensor softmax(const Tensor& x, int64_t dim, ScalarType dtype) {
  if (autograd::should_record(x)) return derivatives::softmax(x, dim, dtype, /*log=*/false);
  return native::softmax(x, dim, dtype);
}

Tensor log_softmax(const Tensor& x, int64_t dim, ScalarType dtype) {
  if (autograd::should_record(x)) return derivatives::softmax(x, dim, dtype, /*log=*/true);
  return native::log_softmax(x, dim, dtype);
}

}  // namespace ember
