#include "autograd/input_buffer.h"

#include "api/elementwise.h"
#include "core/error.h"

namespace ember {
namespace autograd {

void InputBuffer::add(size_t pos, Tensor grad) {
  EMBER_CHECK(pos < buffer_.size(), "[autograd] input buffer index ", pos, " out of range");
  if (!grad.defined()) return;
  Tensor& slot = buffer_[pos];
  if (!slot.defined()) {
    slot = std::move(grad);
  } else {
    slot = ember::add(slot, grad);  // out of place: either tensor may be referenced elsewhere
  }
}

}  // namespace autograd
}  // namespace ember
