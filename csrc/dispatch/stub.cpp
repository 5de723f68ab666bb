#include "dispatch/stub.h"

#include <cstring>
#include <mutex>

// The linker defines these for a section whose name is a C identifier: the bounds of every
// EMBER_REGISTER_KERNEL_CPU entry in the library.
extern "C" {
extern const char __start_ember_cpu_kernels[] __attribute__((weak, visibility("hidden")));
extern const char __stop_ember_cpu_kernels[] __attribute__((weak, visibility("hidden")));
}

namespace ember {
namespace detail {

namespace {
// Every CpuKernelEntry<Fn> has this layout whatever Fn is: two pointers.
struct UntypedEntry {
  void* slot;
  void* kernel;
};
static_assert(sizeof(CpuKernelEntry<void (*)()>) == sizeof(UntypedEntry), "entry layout");
}  // namespace

void apply_cpu_kernel_registrations() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* begin = __start_ember_cpu_kernels;
    const char* end = __stop_ember_cpu_kernels;
    if (begin == nullptr) return;
    for (const char* p = begin; p + sizeof(UntypedEntry) <= end; p += sizeof(UntypedEntry)) {
      UntypedEntry e;
      std::memcpy(&e, p, sizeof e);
      if (e.slot == nullptr) continue;  // alignment padding between object files, if any
      std::memcpy(e.slot, &e.kernel, sizeof e.kernel);
    }
  });
}

}  // namespace detail
}  // namespace ember
