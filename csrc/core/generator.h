// Random number generation: a Philox4x32-10 counter-based generator (Salmon et al., "Parallel
// Random Numbers: As Easy as 1, 2, 3", SC 2011). See docs/design/random.md.
//
// Note [Philox counter reservation]: a generator is (seed, offset). The seed is the Philox key;
// every random op reserves, under the generator's mutex, a contiguous block of `n` counters
// [offset, offset + n) and advances offset by n. Counter offset + j yields four 32-bit words that
// the op's kernel turns into the values of element block j. Each element's value therefore
// depends only on (seed, offset, its index): parallel chunks may run in any order on any number
// of threads and the result is bit-identical, and two ops never share counters.
#pragma once
#include <array>
#include <cstdint>
#include <mutex>

#include "core/intrusive_ptr.h"

namespace ember {

using PhiloxBlock = std::array<uint32_t, 4>;

// One Philox4x32-10 evaluation: 10 rounds of the bijection keyed by (k0, k1) on the 128-bit
// counter ctr (word 0 least significant).
inline PhiloxBlock philox4x32_10(PhiloxBlock ctr, uint32_t k0, uint32_t k1) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t(kMul0) * c0;
    const uint64_t p1 = uint64_t(kMul1) * c2;
    const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    const uint32_t n1 = static_cast<uint32_t>(p1);
    const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    const uint32_t n3 = static_cast<uint32_t>(p0);
    c0 = n0, c1 = n1, c2 = n2, c3 = n3;
    k0 += kWeyl0;  // the key schedule: a Weyl sequence
    k1 += kWeyl1;
  }
  return {c0, c1, c2, c3};
}

// The counters one op may use: block j of the op is Philox(counter = offset + j, key = seed).
struct PhiloxState {
  uint64_t seed = 0;
  uint64_t offset = 0;
  PhiloxBlock block(uint64_t j) const {
    const uint64_t c = offset + j;
    return philox4x32_10({static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32), 0u, 0u},
                         static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
  }
};

class Generator : public RefCounted {
 public:
  // PyTorch's default seed, so that a fresh ember.Generator().initial_seed() matches torch's.
  static constexpr uint64_t kDefaultSeed = 67280421310721ULL;
  // get_state() layout: seed then offset, each 8 bytes little-endian.
  static constexpr size_t kStateBytes = 16;

  explicit Generator(uint64_t seed = kDefaultSeed) : seed_(seed) {}

  void manual_seed(uint64_t seed);
  // Seeds from a non-deterministic source (std::random_device) and returns the new seed.
  uint64_t seed();
  uint64_t initial_seed() const;
  // Reserves `nblocks` consecutive counters for one op (see the note above).
  PhiloxState reserve(uint64_t nblocks);

  std::array<uint8_t, kStateBytes> get_state() const;
  // Throws RuntimeError naming the expected size when nbytes != kStateBytes.
  void set_state(const uint8_t* data, size_t nbytes);

 private:
  mutable std::mutex mutex_;  // guards seed_ and offset_
  uint64_t seed_;
  uint64_t offset_ = 0;
};

using GeneratorPtr = intrusive_ptr<Generator>;

// The process-wide generator behind ember.manual_seed / ember.rand without generator=.
const GeneratorPtr& default_generator();
// `g` when given, else the default generator.
inline Generator& generator_or_default(Generator* g) {
  return g ? *g : *default_generator();
}

}  // namespace ember
