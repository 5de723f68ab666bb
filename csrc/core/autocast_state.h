// Autocast's thread-local state (PyTorch's at::autocast state): per device type whether
// autocast is on and the lower-precision dtype it casts to, whether the weight cache is on, the
// nesting depth of autocast regions, and the per-thread cast cache. Core keeps only the state:
// the casting policy that the public ops call is api/autocast.h, and docs/design/autocast.md
// describes both.
#pragma once
#include <cstddef>

#include "core/device.h"
#include "core/dtype.h"
#include "core/tensor.h"

namespace ember {
namespace autocast_state {

struct Flags {
  // Indexed by DeviceType: CPU, CUDA.
  bool enabled[kNumDeviceTypes] = {false, false};
  ScalarType dtype[kNumDeviceTypes] = {ScalarType::BFloat16, ScalarType::Float16};
  // Whether lower-precision casts of float32 leaves that require grad (parameters) are cached.
  bool cache_enabled = true;
  // How many autocast regions (Python context managers) enclose the current point; leaving the
  // outermost one clears the cast cache.
  int nesting = 0;
};
static_assert(kNumDeviceTypes == 2, "Flags' defaults name one dtype per device type");

// Defined in autocast_state.cpp (not inline), like grad_state::flags(): one instance per thread
// for the whole process, shared by libember and the bindings module.
Flags& flags();

// ---- the cast cache ----------------------------------------------------------------------
// Maps a source tensor's TensorImpl* to its cast. An entry holds a reference to the source as
// well as to the cast, so the key's TensorImpl stays alive (and its address cannot be reused by
// another tensor) until the cache is cleared.

// The cached cast of `src`, or an undefined tensor.
Tensor cached_cast(const TensorImpl* src);
// Records (or replaces) the cast of `src`.
void cache_cast(const Tensor& src, const Tensor& cast);
// Drops every entry of this thread's cache.
void clear_cache();
size_t cache_size();

}  // namespace autocast_state
}  // namespace ember
