#include "dispatch/dtype_dispatch.h"

namespace ember {

void throw_unsupported_dtype(const char* op, ScalarType t) {
  EMBER_THROW(NotImplementedError, "[", op, "] not implemented for dtype ", dtype_name(t));
}

}  // namespace ember
