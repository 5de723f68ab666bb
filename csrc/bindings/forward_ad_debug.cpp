// ember._C._forward_ad_debug: introspection of pending tangents for the tests (which ops carry an
// explicit JVP formula, docs/design/forward-ad.md). Private: not part of the public API.
#include <string>

#include "autograd/forward_ad.h"
#include "autograd/functions.h"
#include "autograd/variable.h"
#include "bindings/pybind_ember.h"

namespace ember {

namespace {

// How the tangent of `t` at the innermost open level will be (or was) computed: "formula" (the
// node's explicit JVP), "derived" (the double-backward fallback), "resolved" (already a tensor)
// or "none". Reading it does not resolve the tangent.
std::string jvp_kind(const Tensor& t) {
  const int64_t level = autograd::forward_ad::current_level();
  autograd::AutogradMeta* m = autograd::meta_of(t);
  if (level < 0 || m == nullptr) return "none";
  std::shared_ptr<autograd::TangentCell> cell;
  {
    std::lock_guard<std::mutex> lock(m->mutex);
    for (const auto& [l, c] : m->forward_grads.cells) {
      if (l == static_cast<uint64_t>(level)) cell = c;
    }
  }
  if (!cell) return "none";
  std::lock_guard<std::mutex> lock(cell->mutex);
  if (cell->pending) return cell->pending->has_jvp_formula() ? "formula" : "derived";
  return cell->tangent.defined() ? "resolved" : "none";
}

}  // namespace

void init_forward_ad_debug(py::module_& m) {
  py::module_ f = m.def_submodule("_forward_ad_debug",
                                  "Introspection of forward-mode AD for the tests (private).");
  f.def("jvp_kind", &jvp_kind, py::arg("tensor"));
}

}  // namespace ember
