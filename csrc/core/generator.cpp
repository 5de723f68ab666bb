#include "core/generator.h"

#include <random>

#include "core/error.h"

namespace ember {

void Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mutex_);
  seed_ = seed;
  offset_ = 0;
}

uint64_t Generator::seed() {
  std::random_device rd;
  // 63 bits, as torch.seed(): the value round-trips through a signed int64 everywhere.
  uint64_t s = ((uint64_t(rd()) << 32) | rd()) & 0x7fffffffffffffffULL;
  manual_seed(s);
  return s;
}

uint64_t Generator::initial_seed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return seed_;
}

PhiloxState Generator::reserve(uint64_t nblocks) {
  std::lock_guard<std::mutex> lock(mutex_);
  PhiloxState s{seed_, offset_};
  offset_ += nblocks;  // wraps after 2^64 blocks (2^68 bytes of random data): never in practice
  return s;
}

std::array<uint8_t, Generator::kStateBytes> Generator::get_state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::array<uint8_t, kStateBytes> out{};
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<uint8_t>(seed_ >> (8 * i));
    out[8 + i] = static_cast<uint8_t>(offset_ >> (8 * i));
  }
  return out;
}

void Generator::set_state(const uint8_t* data, size_t nbytes) {
  EMBER_CHECK(nbytes == kStateBytes, "[set_state] Expected an RNG state of ", kStateBytes,
              " bytes (Philox seed and offset) but found the input RNG state size to be ", nbytes);
  uint64_t seed = 0, offset = 0;
  for (int i = 0; i < 8; ++i) {
    seed |= uint64_t(data[i]) << (8 * i);
    offset |= uint64_t(data[8 + i]) << (8 * i);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  seed_ = seed;
  offset_ = offset;
}

const GeneratorPtr& default_generator() {
  static const GeneratorPtr g = make_intrusive<Generator>();
  return g;
}

}  // namespace ember
