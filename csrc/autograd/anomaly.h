// Anomaly mode (set_detect_anomaly / detect_anomaly): nodes remember the forward stack trace
// where they were created, and a backward output containing NaN raises an error naming the node
// and showing that trace.
#pragma once
#include <atomic>
#include <functional>
#include <string>

namespace ember {
namespace autograd {

struct AnomalyMode {
  static bool is_enabled() { return enabled().load(std::memory_order_relaxed); }
  static void set_enabled(bool on, bool check_nan = true) {
    enabled().store(on, std::memory_order_relaxed);
    check_nan_flag().store(check_nan, std::memory_order_relaxed);
  }
  static bool should_check_nan() { return check_nan_flag().load(std::memory_order_relaxed); }
  // The bindings install a provider of the current Python stack trace.
  static void set_stack_provider(std::function<std::string()> f) { provider() = std::move(f); }
  static std::string current_stack() { return provider() ? provider()() : std::string(); }

 private:
  // Defined in anomaly.cpp: one instance for the process, shared by libember and the bindings.
  static std::atomic<bool>& enabled();
  static std::atomic<bool>& check_nan_flag();
  static std::function<std::string()>& provider();
};

}  // namespace autograd
}  // namespace ember
