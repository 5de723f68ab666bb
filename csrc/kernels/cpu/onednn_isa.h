// oneDNN picks its own instruction set from CPUID. When EMBER_CPU_CAPABILITY lowers Ember's level
// (core/cpu_capability.h), oneDNN is lowered to match, so that a forced level exercises the same
// code paths, GEMM and convolution included, as a CPU of that level would.
#pragma once

namespace ember {
namespace native {

// Applies the limit once, before the caller creates its first oneDNN engine.
void limit_onednn_isa_to_cpu_capability();

}  // namespace native
}  // namespace ember
