#include "core/grad_state.h"

namespace ember {
namespace grad_state {

Flags& flags() {
  thread_local Flags f;
  return f;
}

}  // namespace grad_state
}  // namespace ember
