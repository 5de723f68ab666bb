#include "kernels/cpu/onednn_isa.h"

#include <oneapi/dnnl/dnnl.hpp>

#include "core/cpu_capability.h"

namespace ember {
namespace native {

void limit_onednn_isa_to_cpu_capability() {
  static const bool applied = [] {
    const CpuCapability level = cpu_capability();
    if (level == max_cpu_capability()) return false;  // not forced: oneDNN uses all it finds
    dnnl::cpu_isa isa = dnnl::cpu_isa::sse41;
    switch (level) {
      case CpuCapability::Default:
        isa = dnnl::cpu_isa::sse41;
        break;
      case CpuCapability::Avx2:
        isa = dnnl::cpu_isa::avx2;
        break;
      case CpuCapability::Avx512:
        isa = dnnl::cpu_isa::avx512_core;
        break;
      case CpuCapability::Avx512VnniBf16:
        isa = dnnl::cpu_isa::avx512_core_bf16;
        break;
    }
    try {
      dnnl::set_max_cpu_isa(isa);
    } catch (const dnnl::error&) {
      // Only possible once oneDNN has dispatched already (ONEDNN_MAX_CPU_ISA set by the user,
      // or a primitive created earlier): its own choice then stands.
      return false;
    }
    return true;
  }();
  (void)applied;
}

}  // namespace native
}  // namespace ember
