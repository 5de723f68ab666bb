#include "core/float_mode.h"

#include <omp.h>

#include <atomic>

#if defined(__x86_64__) || defined(_M_X64)
#include <xmmintrin.h>
#define EMBER_HAS_MXCSR 1
#else
#define EMBER_HAS_MXCSR 0
#endif

namespace ember {

namespace {
// Odd generations mean "on". Each thread remembers the generation it applied, so a change is
// picked up by every thread exactly once.
std::atomic<unsigned> g_generation{0};
thread_local unsigned t_applied_generation = 0;

#if EMBER_HAS_MXCSR
constexpr unsigned kFlushBits = 0x8040;  // FTZ (bit 15) | DAZ (bit 6)

void write_mode(bool on) {
  const unsigned csr = _mm_getcsr();
  _mm_setcsr(on ? (csr | kFlushBits) : (csr & ~kFlushBits));
}
#endif
}  // namespace

bool flush_denormal_enabled() {
  return (g_generation.load(std::memory_order_relaxed) & 1u) != 0;
}

void apply_flush_denormal() {
#if EMBER_HAS_MXCSR
  const unsigned generation = g_generation.load(std::memory_order_relaxed);
  if (generation == t_applied_generation) return;
  write_mode((generation & 1u) != 0);
  t_applied_generation = generation;
#endif
}

bool set_flush_denormal(bool on) {
#if EMBER_HAS_MXCSR
  // Every x86-64 CPU has FTZ; DAZ arrived with later SSE2 parts and is reported by the MXCSR
  // mask that fxsave would give. All CPUs Ember's levels target (x86-64-v2 and up) have both.
  unsigned generation = g_generation.load();
  while (((generation & 1u) != 0) != on &&
         !g_generation.compare_exchange_weak(generation, generation + 1)) {
  }
  apply_flush_denormal();
  // The pool's threads take it now, so that oneDNN's regions (same OpenMP pool) see it too.
#pragma omp parallel
  apply_flush_denormal();
  return true;
#else
  (void)on;
  return false;
#endif
}

}  // namespace ember
