// The op observer: how the profiler and the ONNX tracer see every op a Python program calls.
//
// Every op reaches C++ through a pybind11 function of ember._C (its submodules, the Tensor class)
// or a hand-written entry point (fastcall.h). While an observer is wanted (a profile is running
// or a trace is being taken), install() swaps the `impl` of each of those functions' pybind11
// records for one that opens a profiler range around the original and reports the call to the
// tracer; uninstall() swaps the originals back. So when nothing observes, the bindings run
// exactly as they were compiled: no flag test, no cost. The hand-written entry points test
// installed() (one relaxed load) and, while installed, hand every call to their pybind11
// fallbacks, which are observed like the rest. See docs/design/profiler.md.
#pragma once
#include <atomic>

#include "bindings/pybind_ember.h"

namespace ember::observer {

namespace detail {
extern std::atomic<bool> g_installed;
}

// Whether the observing impls are in place (the hand-written entry points then take their
// observed fallbacks).
inline bool installed() {
  return detail::g_installed.load(std::memory_order_relaxed);
}

// _C._profiler: start/stop, ranges for record_function, and the tracer hook.
void init_observer(py::module_& m, py::handle tensor_class);

}  // namespace ember::observer
