#include "core/cpu_capability.h"

#include <cpuid.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

namespace ember {
namespace {

constexpr const char* kNames[kNumCpuCapabilities] = {"default", "avx2", "avx512",
                                                     "avx512_vnni_bf16"};

struct CpuidRegs {
  unsigned a = 0, b = 0, c = 0, d = 0;
};

CpuidRegs cpuid(unsigned leaf, unsigned subleaf) {
  CpuidRegs r;
  if (!__get_cpuid_count(leaf, subleaf, &r.a, &r.b, &r.c, &r.d)) r = CpuidRegs{};
  return r;
}

bool bit(unsigned reg, int i) {
  return (reg >> i) & 1u;
}

// XCR0: which register states the operating system saves on a context switch. A CPU with AVX-512
// under an OS that does not save the zmm state cannot use it.
uint64_t xgetbv0() {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}

CpuCapability detect() {
  const CpuidRegs l1 = cpuid(1, 0);
  const bool sse42 = bit(l1.c, 20), popcnt = bit(l1.c, 23);
  const bool osxsave = bit(l1.c, 27), avx = bit(l1.c, 28), fma = bit(l1.c, 12),
             f16c = bit(l1.c, 29);
  // Below x86-64-v2 the library itself cannot run (everything is compiled for it); such a CPU
  // would have failed long before this point, so Default is the floor.
  if (!(sse42 && popcnt)) return CpuCapability::Default;
  if (!(osxsave && avx && fma && f16c)) return CpuCapability::Default;
  const uint64_t xcr0 = xgetbv0();
  const bool os_ymm = (xcr0 & 0x6) == 0x6;              // SSE and AVX state
  const bool os_zmm = os_ymm && (xcr0 & 0xe0) == 0xe0;  // opmask, ZMM_Hi256, Hi16_ZMM
  const CpuidRegs l7 = cpuid(7, 0);
  const bool avx2 = bit(l7.b, 5), bmi1 = bit(l7.b, 3), bmi2 = bit(l7.b, 8);
  const bool lzcnt = bit(cpuid(0x80000001, 0).c, 5);
  if (!(os_ymm && avx2 && bmi1 && bmi2 && lzcnt)) return CpuCapability::Default;
  const bool avx512 = bit(l7.b, 16) /*F*/ && bit(l7.b, 17) /*DQ*/ && bit(l7.b, 28) /*CD*/ &&
                      bit(l7.b, 30) /*BW*/ && bit(l7.b, 31) /*VL*/;
  if (!(os_zmm && avx512)) return CpuCapability::Avx2;
  const bool vnni = bit(l7.c, 11);
  const bool bf16 = bit(cpuid(7, 1).a, 5);
  if (!(vnni && bf16)) return CpuCapability::Avx512;
  return CpuCapability::Avx512VnniBf16;
}

struct Selection {
  CpuCapability max_level;
  CpuCapability level;
  std::string warning;
};

Selection select() {
  Selection s;
  s.max_level = detect();
  s.level = s.max_level;
  const char* env = std::getenv("EMBER_CPU_CAPABILITY");
  if (env == nullptr || *env == '\0') return s;
  const std::string requested(env);
  for (int i = 0; i < kNumCpuCapabilities; ++i) {
    if (requested != kNames[i]) continue;
    if (i > static_cast<int>(s.max_level)) {
      s.warning = "EMBER_CPU_CAPABILITY=" + requested + " is above what this CPU supports (" +
                  kNames[static_cast<int>(s.max_level)] + "); using " +
                  kNames[static_cast<int>(s.max_level)] +
                  ". Levels, lowest first: " + cpu_capability_names();
    } else {
      s.level = static_cast<CpuCapability>(i);
    }
    return s;
  }
  s.warning = "EMBER_CPU_CAPABILITY=" + requested + " is not a CPU capability level; using " +
              kNames[static_cast<int>(s.max_level)] +
              ". Levels, lowest first: " + cpu_capability_names();
  return s;
}

// Function-local static: initialised once, thread-safely, on first use (possibly during another
// translation unit's static initialisation).
const Selection& selection() {
  static const Selection s = select();
  return s;
}

}  // namespace

const char* cpu_capability_name(CpuCapability level) {
  return kNames[static_cast<int>(level)];
}

CpuCapability max_cpu_capability() {
  return selection().max_level;
}
CpuCapability cpu_capability() {
  return selection().level;
}
const std::string& cpu_capability_warning() {
  return selection().warning;
}

std::string cpu_capability_names() {
  std::string out;
  for (int i = 0; i < kNumCpuCapabilities; ++i) {
    if (i) out += ", ";
    out += kNames[i];
  }
  return out;
}

bool cpu_is_intel() {
  static const bool intel = [] {
    const CpuidRegs r = cpuid(0, 0);  // the vendor string is in ebx, edx, ecx
    char vendor[13] = {};
    std::memcpy(vendor, &r.b, 4);
    std::memcpy(vendor + 4, &r.d, 4);
    std::memcpy(vendor + 8, &r.c, 4);
    return std::string(vendor) == "GenuineIntel";
  }();
  return intel;
}

}  // namespace ember
