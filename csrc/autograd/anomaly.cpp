#include "autograd/anomaly.h"

namespace ember {
namespace autograd {

std::atomic<bool>& AnomalyMode::enabled() {
  static std::atomic<bool> v{false};
  return v;
}

std::atomic<bool>& AnomalyMode::check_nan_flag() {
  static std::atomic<bool> v{true};
  return v;
}

std::function<std::string()>& AnomalyMode::provider() {
  static std::function<std::string()> f;
  return f;
}

}  // namespace autograd
}  // namespace ember
