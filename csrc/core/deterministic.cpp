// The deterministic-algorithms switch and its alert (Note [Deterministic Algorithms]).
#include "core/deterministic.h"

#include <atomic>
#include <cstdio>

#include "core/error.h"

namespace ember {

namespace {
// Both flags change together in set_deterministic_algorithms; a reader that sees one of them
// mid-change at worst warns where it would have thrown, for one op, during the switch itself.
std::atomic<bool> g_enabled{false};
std::atomic<bool> g_warn_only{false};
std::atomic<WarningHandler> g_warning_handler{nullptr};
}  // namespace

bool deterministic_algorithms() {
  return g_enabled.load(std::memory_order_relaxed);
}

bool deterministic_algorithms_warn_only() {
  return g_warn_only.load(std::memory_order_relaxed);
}

void set_deterministic_algorithms(bool enabled, bool warn_only) {
  g_warn_only.store(warn_only);
  g_enabled.store(enabled);
}

void set_warning_handler(WarningHandler handler) {
  g_warning_handler.store(handler);
}

void warn(const std::string& message) {
  if (WarningHandler h = g_warning_handler.load()) {
    h(message);
  } else {
    std::fprintf(stderr, "UserWarning: %s\n", message.c_str());
  }
}

void alert_not_deterministic(const std::string& caller) {
  if (!deterministic_algorithms()) return;
  // PyTorch's wording, so that code matching on the message keeps working.
  std::string msg = str_cat(
      caller,
      " does not have a deterministic implementation, but you set "
      "'torch.use_deterministic_algorithms(True)'. You can turn off determinism just for this "
      "operation, or you can use the 'warn_only=True' option, if that's acceptable for your "
      "application.");
  if (deterministic_algorithms_warn_only()) {
    warn(msg);
    return;
  }
  throw Error(msg);
}

}  // namespace ember
