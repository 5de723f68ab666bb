// Little-endian uint64 fields, as the FileStore's records and the TCPStore's messages write
// them.
#pragma once
#include <cstdint>
#include <string>

namespace ember::distributed::wire {

inline void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

inline uint64_t decode_u64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

// Reads one at `at` and moves past it; false when fewer than 8 bytes are left.
inline bool get_u64(const std::string& in, size_t& at, uint64_t& v) {
  if (in.size() - at < 8) return false;
  v = decode_u64(in.data() + at);
  at += 8;
  return true;
}

}  // namespace ember::distributed::wire
