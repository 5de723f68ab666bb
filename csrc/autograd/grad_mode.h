// Grad mode and inference mode: thread-local switches with RAII guards (as torch's
// GradMode / AutoGradMode / NoGradGuard / InferenceMode).
#pragma once
#include "core/grad_state.h"

namespace ember {
namespace autograd {

struct GradMode {
  static bool is_enabled() { return grad_state::flags().grad_enabled; }
  static void set_enabled(bool enabled) { grad_state::flags().grad_enabled = enabled; }
};

// Sets grad mode for a scope and restores the previous value.
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : prev_(GradMode::is_enabled()) {
    GradMode::set_enabled(enabled);
  }
  ~AutoGradMode() { GradMode::set_enabled(prev_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool prev_;
};

class NoGradGuard : public AutoGradMode {
 public:
  NoGradGuard() : AutoGradMode(false) {}
};

struct InferenceMode {
  static bool is_enabled() { return grad_state::flags().inference; }
};

// Inference mode implies no grad; tensors created inside are inference tensors.
class InferenceModeGuard {
 public:
  explicit InferenceModeGuard(bool enabled = true) : prev_(grad_state::flags()) {
    if (enabled) {
      grad_state::flags().inference = true;
      grad_state::flags().grad_enabled = false;
    } else {
      grad_state::flags().inference = false;
    }
  }
  ~InferenceModeGuard() { grad_state::flags() = prev_; }
  InferenceModeGuard(const InferenceModeGuard&) = delete;
  InferenceModeGuard& operator=(const InferenceModeGuard&) = delete;

 private:
  grad_state::Flags prev_;
};

}  // namespace autograd
}  // namespace ember
