#include "dispatch/dtype_dispatch.h"

namespace ember {

void throw_unsupported_dtype(const char* op, ScalarType t) {
  if (is_quantized(t)) {
    EMBER_THROW(NotImplementedError, "[", op, "] does not take quantized tensors (dtype ",
                dtype_name(t),
                "): call .dequantize() for a float tensor first, or use a quantized module "
                "(ember.ao.nn.quantized)");
  }
  EMBER_THROW(NotImplementedError, "[", op, "] not implemented for dtype ", dtype_name(t));
}

}  // namespace ember
