// Autocast on the CPU (automatic mixed precision, PyTorch's torch.autocast("cpu")): the casting
// policy that the public ops of autocast's op lists call first thing. State (on/off, dtype, the
// weight cache) is core/autocast_state.h; docs/design/autocast.md lists the ops and says how to
// add one. A hooked op reads:
//
//   Tensor mm(const Tensor& a, const Tensor& b, const Tensor& out) {
//     if (autocast::active() && !out.defined()) {  // one thread-local read when autocast is off
//       const Tensor a2 = autocast::lower(a), b2 = autocast::lower(b);
//       autocast::ExcludeGuard no_autocast;        // the op itself, and what it calls, run as is
//       return ember::mm(a2, b2);
//     }
//     ... the op ...
//   }
//
// As in PyTorch, out= and in-place forms are not autocast (their result dtype is the caller's),
// float64 tensors are never cast, and the casts are recorded (ToCopyBackward0), so gradients
// reach float32 leaves in float32.
#pragma once
#include <vector>

#include "core/autocast_state.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/tensor.h"

namespace ember {
namespace autocast {

// Whether autocast is on for device type `d` on this thread: one thread-local bool, the only
// cost a hooked op pays while autocast is off.
inline bool active(DeviceType d = DeviceType::CPU) {
  return autocast_state::flags().enabled[static_cast<int>(d)];
}

// The lower-precision dtype of `d` (set by autocast(dtype=...); bfloat16 on the CPU by default).
inline ScalarType lower_dtype(DeviceType d = DeviceType::CPU) {
  return autocast_state::flags().dtype[static_cast<int>(d)];
}

// ---- the state, as torch.set_autocast_enabled & co. set it (bindings/autocast.cpp) -----------
inline void set_enabled(DeviceType d, bool enabled) {
  autocast_state::flags().enabled[static_cast<int>(d)] = enabled;
}
inline void set_lower_dtype(DeviceType d, ScalarType dtype) {
  autocast_state::flags().dtype[static_cast<int>(d)] = dtype;
}
inline bool is_cache_enabled() {
  return autocast_state::flags().cache_enabled;
}
inline void set_cache_enabled(bool enabled) {
  autocast_state::flags().cache_enabled = enabled;
}
// The nesting depth of autocast regions after entering / leaving one (the Python context
// manager clears the cache when leaving brings it to 0).
inline int increment_nesting() {
  return ++autocast_state::flags().nesting;
}
inline int decrement_nesting() {
  return --autocast_state::flags().nesting;
}
inline void clear_cache() {
  autocast_state::clear_cache();
}
inline size_t cache_size() {
  return autocast_state::cache_size();
}

// Turns autocast off for `d` for a scope and restores the previous state (also on exceptions):
// a hooked op runs its body under it, so that the public ops the body calls (a composite's
// pieces) are not cast a second time. PyTorch's ExcludeDispatchKeyGuard on the Autocast key.
class ExcludeGuard {
 public:
  explicit ExcludeGuard(DeviceType d = DeviceType::CPU) : index_(static_cast<int>(d)) {
    bool& flag = autocast_state::flags().enabled[index_];
    prev_ = flag;
    flag = false;
  }
  ~ExcludeGuard() { autocast_state::flags().enabled[index_] = prev_; }
  ExcludeGuard(const ExcludeGuard&) = delete;
  ExcludeGuard& operator=(const ExcludeGuard&) = delete;

 private:
  int index_;
  bool prev_;
};

// Whether autocast casts `t` for device type `d`: a defined floating tensor of `d` other than
// float64 (PyTorch's is_eligible; Python numbers wrapped into tensors are never cast).
bool eligible(const Tensor& t, DeviceType d = DeviceType::CPU);

// PyTorch's cached_cast: `t` converted to `to` by the recorded conversion (ember::to_dtype),
// or `t` itself when it is not eligible or already of dtype `to`. The lower-precision cast of a
// float32 leaf that requires grad (a parameter; not a view) is cached while the cache is
// enabled and inference mode is off, so every op of an autocast region that uses the parameter
// shares one cast; it is made with grad mode on, so the cached cast has its history even when
// the first use was under no_grad. The cache is cleared when the outermost region exits.
Tensor cast(const Tensor& t, ScalarType to, DeviceType d = DeviceType::CPU);
std::vector<Tensor> cast(const std::vector<Tensor>& ts, ScalarType to,
                         DeviceType d = DeviceType::CPU);

// The lower_precision_fp policy: floating inputs to the autocast dtype.
inline Tensor lower(const Tensor& t, DeviceType d = DeviceType::CPU) {
  return cast(t, lower_dtype(d), d);
}
// The fp32 policy: float16 / bfloat16 inputs to float32.
inline Tensor to_fp32(const Tensor& t, DeviceType d = DeviceType::CPU) {
  return cast(t, ScalarType::Float32, d);
}

// The promote policy (PyTorch's CPU list: cat, stack, index_copy): the dtype the eligible inputs
// meet in, float32 when any of them is float32 and the autocast dtype otherwise; float64 inputs
// are left out (and are not cast). Raises for a 16-bit floating input of the other kind, as
// PyTorch's prioritize does. Cast the inputs with cast(t, promote_type(...)).
ScalarType promote_type(const std::vector<Tensor>& ts, DeviceType d = DeviceType::CPU);

}  // namespace autocast
}  // namespace ember
