#include "data/tar_writer.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/error.h"

namespace ember::data {

namespace {

constexpr int kBlock = 512;

// width - 1 octal digits, zero-padded, then NUL; the caller keeps value within them.
void put_octal(char* field, size_t width, int64_t value) {
  auto v = static_cast<uint64_t>(value);
  for (size_t i = width - 1; i-- > 0; v >>= 3) field[i] = static_cast<char>('0' + (v & 7));
  field[width - 1] = '\0';
}

void finish(char* h) {
  std::memset(h + 148, ' ', 8);
  unsigned sum = 0;
  for (int i = 0; i < kBlock; ++i) sum += static_cast<unsigned char>(h[i]);
  std::snprintf(h + 148, 8, "%06o", sum);
  h[155] = ' ';
}

std::string ustar_block(const std::string& name, const std::string& prefix, int64_t size,
                        int64_t mtime, int mode, char type, const std::string& user,
                        const std::string& group) {
  std::string block(kBlock, '\0');
  char* h = block.data();
  std::memcpy(h, name.data(), std::min<size_t>(name.size(), 100));
  put_octal(h + 100, 8, mode & 07777);
  put_octal(h + 108, 8, 0);
  put_octal(h + 116, 8, 0);
  put_octal(h + 124, 12, size);
  put_octal(h + 136, 12, mtime < 0 ? 0 : mtime);
  h[156] = type;
  std::memcpy(h + 257,
              "ustar\0"
              "00",
              8);
  std::memcpy(h + 265, user.data(), std::min<size_t>(user.size(), 31));
  std::memcpy(h + 297, group.data(), std::min<size_t>(group.size(), 31));
  std::memcpy(h + 345, prefix.data(), std::min<size_t>(prefix.size(), 155));
  finish(h);
  return block;
}

// A pax record "LEN key=value\n", where LEN counts its own digits.
std::string pax_record(const std::string& key, const std::string& value) {
  const size_t body = key.size() + value.size() + 3;  // ' ', '=', '\n'
  size_t len = body + 1;
  while (std::to_string(len).size() + body > len) ++len;
  return std::to_string(len) + " " + key + "=" + value + "\n";
}

}  // namespace

std::string tar_file_header(const std::string& name, int64_t size, int64_t mtime, int mode,
                            const std::string& user, const std::string& group) {
  EMBER_CHECK_T(ValueError, !name.empty(), "[TarWriter] an empty member name");
  EMBER_CHECK_T(ValueError, name.find('\0') == std::string::npos,
                "[TarWriter] a member name with a NUL byte");
  EMBER_CHECK_T(ValueError, size >= 0, "[TarWriter] negative size ", size);
  constexpr int64_t kUstarMaxSize = (int64_t{1} << 33) - 1;  // 11 octal digits
  std::string prefix, short_name = name;
  bool fits = name.size() <= 100;
  if (!fits && name.size() <= 256) {
    // Split at a '/' so that the prefix fits 155 bytes and the rest 100.
    for (size_t slash = name.find('/'); slash != std::string::npos;
         slash = name.find('/', slash + 1)) {
      // A split at index 0 would lose an absolute name's leading '/'.
      if (slash >= 1 && slash <= 155 && name.size() - slash - 1 <= 100 && slash + 1 < name.size()) {
        prefix = name.substr(0, slash);
        short_name = name.substr(slash + 1);
        fits = true;
        break;
      }
    }
  }
  std::string out;
  if (!fits || size > kUstarMaxSize) {
    std::string records;
    if (!fits) records += pax_record("path", name);
    if (size > kUstarMaxSize) records += pax_record("size", std::to_string(size));
    out += ustar_block("PaxHeader/" + name.substr(0, 90), "", static_cast<int64_t>(records.size()),
                       mtime, 0644, 'x', user, group);
    out += records;
    out.append((kBlock - records.size() % kBlock) % kBlock, '\0');
    if (!fits) {
      short_name = name.substr(0, 100);
      prefix.clear();
    }
  }
  out += ustar_block(short_name, prefix, size > kUstarMaxSize ? 0 : size, mtime, mode, '0', user,
                     group);
  return out;
}

}  // namespace ember::data
