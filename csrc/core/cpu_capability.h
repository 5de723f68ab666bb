// CPU capability levels: the instruction sets Ember's SIMD kernels are compiled for, one copy per
// level in the same library, and the one chosen at run time (docs/design/cpu-dispatch.md).
//
// The level in use is the highest one the CPU supports, or the one named by the environment
// variable EMBER_CPU_CAPABILITY (read once, the first time anything asks), which may only lower
// it: a level the CPU cannot run is refused with a warning rather than obeyed, so forcing a level
// can never end in an illegal instruction.
#pragma once
#include <string>

namespace ember {

// Ordered: each level's instructions include the previous one's.
enum class CpuCapability : int {
  Default = 0,         // x86-64-v2: SSE4.2, POPCNT (the baseline the whole library runs on)
  Avx2 = 1,            // + AVX, AVX2, FMA, F16C, BMI1/2 (x86-64-v3)
  Avx512 = 2,          // + AVX-512 F, BW, DQ, VL, CD (x86-64-v4)
  Avx512VnniBf16 = 3,  // + AVX512_VNNI and AVX512_BF16 (Zen 4, Sapphire Rapids)
};
constexpr int kNumCpuCapabilities = 4;

const char* cpu_capability_name(CpuCapability level);
// The highest level this CPU (and its operating system, for the wider registers) supports.
CpuCapability max_cpu_capability();
// The level the kernels run at: max_cpu_capability(), lowered by EMBER_CPU_CAPABILITY.
CpuCapability cpu_capability();
// Why EMBER_CPU_CAPABILITY was not obeyed, or "" when it was (or is unset). Python turns a
// non-empty message into a warning at import.
const std::string& cpu_capability_warning();
// Every level name, lowest first, comma-separated (for messages).
std::string cpu_capability_names();
// Whether the CPU reports the vendor "GenuineIntel": some oneDNN kernel choices are measured per
// vendor (Note [Padded B rows]).
bool cpu_is_intel();

}  // namespace ember
