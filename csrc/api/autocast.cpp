// Autocast's casting policy (see api/autocast.h).
#include "api/autocast.h"

#include "api/views.h"
#include "autograd/grad_mode.h"
#include "autograd/variable.h"
#include "core/error.h"

namespace ember {
namespace autocast {

bool eligible(const Tensor& t, DeviceType d) {
  if (!t.defined() || t.device().type != d) return false;
  const ScalarType s = t.dtype();
  const bool floating = s == ScalarType::Float32 || s == ScalarType::BFloat16 ||
                        s == ScalarType::Float16;  // float64 is never cast
  return floating && !t.impl()->is_wrapped_number();
}

Tensor cast(const Tensor& t, ScalarType to, DeviceType d) {
  if (!eligible(t, d) || t.dtype() == to) return t;
  const autocast_state::Flags& f = autocast_state::flags();
  // PyTorch's heuristic (Apex's): cache the lower-precision casts of float32 model weights.
  const bool cacheable = f.cache_enabled && to == f.dtype[static_cast<int>(d)] &&
                         t.dtype() == ScalarType::Float32 && autograd::requires_grad(t) &&
                         autograd::is_leaf(t) && !t.impl()->view_base() &&
                         !autograd::InferenceMode::is_enabled();
  if (!cacheable) return ember::to_dtype(t, to);
  // The dtype check keeps a nested region with another autocast dtype from reusing the outer
  // region's cast (PyTorch would hand it out and fail with a dtype mismatch).
  Tensor hit = autocast_state::cached_cast(t.impl());
  if (hit.defined() && hit.dtype() == to) return hit;
  Tensor r;
  {
    autograd::AutoGradMode grad_on(true);
    r = ember::to_dtype(t, to);
  }
  autocast_state::cache_cast(t, r);
  return r;
}

std::vector<Tensor> cast(const std::vector<Tensor>& ts, ScalarType to, DeviceType d) {
  std::vector<Tensor> r;
  r.reserve(ts.size());
  for (const Tensor& t : ts) r.push_back(cast(t, to, d));
  return r;
}

ScalarType promote_type(const std::vector<Tensor>& ts, DeviceType d) {
  const ScalarType lower = lower_dtype(d);
  ScalarType current = lower;
  for (const Tensor& t : ts) {
    if (!t.defined() || t.device().type != d || !is_floating(t.dtype())) continue;
    const ScalarType next = t.dtype();
    if (next == ScalarType::Float64) continue;  // left as it is
    if (current == ScalarType::Float32 || next == ScalarType::Float32) {
      current = ScalarType::Float32;
    } else {
      EMBER_CHECK(next == lower, "[autocast] unexpected floating dtype ", dtype_name(next),
                  " among the inputs of a promote-policy op (autocast dtype ", dtype_name(lower),
                  ")");
    }
  }
  return current;
}

}  // namespace autocast
}  // namespace ember
