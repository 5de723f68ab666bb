// CPU memory: 64-byte aligned blocks (one cache line, the widest SIMD load), with counters that
// tests use to check that graphs and tensors are freed.
#pragma once
#include <cstddef>
#include <cstdint>

namespace ember {

// Throws OutOfMemoryError naming `op` when the block cannot be had. Returns nullptr for 0 bytes.
void* cpu_alloc(size_t nbytes, const char* op);
void cpu_free(void* ptr, size_t nbytes) noexcept;

struct AllocatorStats {
  int64_t current_bytes;  // bytes held in blocks from cpu_alloc not yet freed
  int64_t peak_bytes;
  int64_t num_allocs;  // cumulative
};
AllocatorStats cpu_allocator_stats();
void reset_cpu_allocator_peak();

}  // namespace ember
