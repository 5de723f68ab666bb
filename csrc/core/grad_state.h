// Thread-local autograd switches (grad mode, inference mode). They live in core because tensor
// creation reads them: a tensor made under inference mode is marked as an inference tensor.
// The public guards are in autograd/grad_mode.h.
#pragma once

namespace ember {
namespace grad_state {

struct Flags {
  bool grad_enabled = true;
  bool inference = false;
};

// Defined in grad_state.cpp (not inline): one instance per thread for the whole process, not
// one per shared library (the bindings module and libember would otherwise disagree).
Flags& flags();

}  // namespace grad_state
}  // namespace ember
