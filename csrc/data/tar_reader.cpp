#include "data/tar_reader.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace ember::data {

namespace {

constexpr int64_t kBlock = 512;
constexpr int64_t kMaxMetaSize = 1
                                 << 20;  // long names and pax records larger than this are corrupt
constexpr int64_t kMaxEntrySize = int64_t{1} << 50;

int64_t padded(int64_t size) {
  return (size + kBlock - 1) / kBlock * kBlock;
}

std::string field_string(const char* p, size_t n) {
  return std::string(p, strnlen(p, n));
}

// An octal field (leading spaces, digits, then NUL or space) or GNU base-256 (high bit set).
bool parse_number(const char* p, size_t n, int64_t& value) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  value = 0;
  if (u[0] & 0x80) {
    if (u[0] == 0xff) return false;  // negative
    uint64_t v = u[0] & 0x7f;
    for (size_t i = 1; i < n; ++i) {
      if (v > (uint64_t{1} << 55)) return false;
      v = (v << 8) | u[i];
    }
    if (v > static_cast<uint64_t>(kMaxEntrySize)) return false;
    value = static_cast<int64_t>(v);
    return true;
  }
  size_t i = 0;
  while (i < n && p[i] == ' ') ++i;
  for (; i < n; ++i) {
    const char c = p[i];
    if (c == '\0' || c == ' ') break;
    if (c < '0' || c > '7') return false;
    if (value > kMaxEntrySize) return false;
    value = value * 8 + (c - '0');
  }
  return value <= kMaxEntrySize;
}

bool all_zero(const char* p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != 0) return false;
  return true;
}

// The header's checksum: unsigned byte sum with the checksum field read as spaces. Old writers used
// signed chars, so either sum is accepted, as GNU tar and Python's tarfile do.
bool checksum_ok(const char* h) {
  int64_t stored = 0;
  if (!parse_number(h + 148, 8, stored)) return false;
  int64_t unsigned_sum = 0, signed_sum = 0;
  for (int i = 0; i < kBlock; ++i) {
    const bool in_field = i >= 148 && i < 156;
    unsigned_sum += in_field ? ' ' : static_cast<unsigned char>(h[i]);
    signed_sum += in_field ? ' ' : static_cast<signed char>(h[i]);
  }
  return stored == unsigned_sum || stored == signed_sum;
}

bool is_regular(char type) {
  return type == '0' || type == '\0' || type == '7';
}

}  // namespace

TarReader::TarReader(std::unique_ptr<ByteSource> source)
    : source_(std::move(source)), buffer_(1 << 18) {}

void TarReader::fail(int64_t at, const std::string& what) const {
  throw ShardError(source_->url(), at, what);
}

size_t TarReader::read_exact(char* dst, size_t n) {
  size_t done = 0;
  while (done < n) {
    if (buffer_pos_ == buffer_len_) {
      if (n - done >= buffer_.size()) {  // large reads skip the buffer
        const size_t got = source_->read(dst + done, n - done);
        if (got == 0) break;
        done += got;
        offset_ += static_cast<int64_t>(got);
        continue;
      }
      buffer_pos_ = 0;
      buffer_len_ = source_->read(buffer_.data(), buffer_.size());
      if (buffer_len_ == 0) break;
    }
    const size_t take = std::min(n - done, buffer_len_ - buffer_pos_);
    std::memcpy(dst + done, buffer_.data() + buffer_pos_, take);
    buffer_pos_ += take;
    done += take;
    offset_ += static_cast<int64_t>(take);
  }
  return done;
}

void TarReader::skip(int64_t n, const TarEntry& entry) {
  const int64_t buffered = static_cast<int64_t>(buffer_len_ - buffer_pos_);
  if (n <= buffered) {
    buffer_pos_ += static_cast<size_t>(n);
    offset_ += n;
    return;
  }
  if (source_->seekable()) {
    const int64_t target = offset_ + n;
    const int64_t size = source_->size();
    if (size >= 0 && target > size)
      fail(entry.start, str_cat("truncated: entry '", entry.name, "' needs bytes up to ", target,
                                " but the shard has ", size));
    source_->seek(target);
    buffer_pos_ = buffer_len_ = 0;
    offset_ = target;
    return;
  }
  char scratch[8192];
  while (n > 0) {
    const size_t want = static_cast<size_t>(std::min<int64_t>(n, sizeof(scratch)));
    const size_t got = read_exact(scratch, want);
    if (got < want)
      fail(entry.start,
           str_cat("truncated: entry '", entry.name, "' ends early, at byte ", offset_));
    n -= static_cast<int64_t>(got);
  }
}

std::string TarReader::read_meta(const TarEntry& entry) {
  if (entry.size > kMaxMetaSize)
    fail(entry.start, str_cat("corrupt header: a ", entry.size, "-byte long-name or pax record"));
  std::string data(static_cast<size_t>(entry.size), '\0');
  if (read_exact(data.data(), data.size()) < data.size())
    fail(entry.start, "truncated: the archive ends inside a long-name or pax header");
  skip(padded(entry.size) - entry.size, entry);
  return data;
}

bool TarReader::next_header(TarEntry& entry) {
  EMBER_CHECK(!data_pending_, "[tar] the previous entry's data was not consumed");
  if (ended_) return false;
  std::string long_name, pax_path;
  int64_t pax_size = -1;
  int64_t first_start = -1;
  char h[kBlock];
  for (;;) {
    const int64_t at = offset_;
    const size_t got = read_exact(h, kBlock);
    if (got == 0 && first_start < 0) {  // a clean end without the zero blocks: accepted
      ended_ = true;
      return false;
    }
    if (got < static_cast<size_t>(kBlock))
      fail(at, got == 0 ? "truncated: the archive ends after a long-name or pax header"
                        : str_cat("truncated: a partial ", got, "-byte header"));
    if (all_zero(h, kBlock)) {
      if (first_start >= 0) fail(at, "corrupt: end-of-archive block after a long-name header");
      ended_ = true;  // the end-of-archive marker; anything after it is padding
      return false;
    }
    if (!checksum_ok(h)) fail(at, "corrupt header: bad checksum (not a tar archive, or damaged)");
    TarEntry e;
    e.start = first_start >= 0 ? first_start : at;
    e.type = h[156];
    if (!parse_number(h + 124, 12, e.size)) fail(at, "corrupt header: bad size field");
    e.data_offset = offset_;
    e.end = e.data_offset + padded(e.size);
    if (e.type == 'L' || e.type == 'K' || e.type == 'x' || e.type == 'g') {
      if (first_start < 0) first_start = at;
      std::string data = read_meta(e);
      if (e.type == 'L') {
        long_name = std::string(data.c_str());
      } else if (e.type == 'x' || e.type == 'g') {
        // Records "LEN key=value\n"; LEN counts the whole record.
        size_t pos = 0;
        while (pos < data.size()) {
          size_t space = data.find(' ', pos);
          if (space == std::string::npos) fail(at, "corrupt pax header: record without a length");
          int64_t len = 0;
          for (size_t i = pos; i < space; ++i) {
            if (data[i] < '0' || data[i] > '9' || len > kMaxMetaSize)
              fail(at, "corrupt pax header: bad record length");
            len = len * 10 + (data[i] - '0');
          }
          if (len <= 0 || pos + static_cast<size_t>(len) > data.size() ||
              data[pos + static_cast<size_t>(len) - 1] != '\n')
            fail(at, "corrupt pax header: record length does not match");
          const std::string record = data.substr(space + 1, pos + len - space - 2);
          const size_t eq = record.find('=');
          if (eq == std::string::npos) fail(at, "corrupt pax header: record without '='");
          const std::string key = record.substr(0, eq), value = record.substr(eq + 1);
          if (e.type == 'x' && key == "path") pax_path = value;
          if (e.type == 'x' && key == "size") {
            int64_t v = 0;
            for (char c : value) {
              if (c < '0' || c > '9' || v > kMaxEntrySize) fail(at, "corrupt pax header: bad size");
              v = v * 10 + (c - '0');
            }
            pax_size = v;
          }
          pos += static_cast<size_t>(len);
        }
        if (e.type == 'g') first_start = -1;  // global headers belong to no entry
      }
      continue;
    }
    if (pax_size >= 0) {
      e.size = pax_size;
      e.end = e.data_offset + padded(e.size);
    }
    if (!pax_path.empty()) {
      e.name = pax_path;
    } else if (!long_name.empty()) {
      e.name = long_name;
    } else {
      e.name = field_string(h, 100);
      // POSIX ustar ("ustar\0" "00") splits long names into prefix "/" name.
      if (std::memcmp(h + 257, "ustar\0", 6) == 0 && h[345] != '\0')
        e.name = field_string(h + 345, 155) + "/" + e.name;
    }
    // Old (V7) archives mark directories as type '\0' with a trailing slash; a type '0' member
    // so named is still a file whose data must be skipped (as tarfile and GNU tar do).
    if (e.type == '\0' && !e.name.empty() && e.name.back() == '/') e.type = '5';
    // Links, directories and devices carry no data whatever their size field says.
    if (e.type >= '1' && e.type <= '6') {
      e.size = 0;
      e.end = e.data_offset;
    }
    const int64_t size = source_->size();
    if (size >= 0 && e.data_offset + e.size > size)
      fail(e.start, str_cat("truncated: entry '", e.name, "' needs ", e.size, " bytes from byte ",
                            e.data_offset, " but the shard has ", size));
    entry = std::move(e);
    data_pending_ = true;
    return true;
  }
}

void TarReader::read_data(TarEntry& entry) {
  EMBER_CHECK(data_pending_, "[tar] no entry data to read");
  entry.data.clear();
  // Grown as bytes arrive, so a corrupt size on a stream fails as truncation, not as a huge
  // allocation.
  const size_t chunk = size_t{16} << 20;
  size_t have = 0;
  while (have < static_cast<size_t>(entry.size)) {
    const size_t want = std::min(chunk, static_cast<size_t>(entry.size) - have);
    entry.data.resize(have + want);
    const size_t got = read_exact(entry.data.data() + have, want);
    have += got;
    if (got < want)
      fail(entry.start, str_cat("truncated: entry '", entry.name, "' has ", have, " of its ",
                                entry.size, " bytes"));
  }
  data_pending_ = false;
  skip(padded(entry.size) - entry.size, entry);
}

void TarReader::skip_data(const TarEntry& entry) {
  EMBER_CHECK(data_pending_, "[tar] no entry data to skip");
  data_pending_ = false;
  skip(padded(entry.size), entry);
}

void TarReader::seek(int64_t offset) {
  if (offset < 0 || offset % kBlock != 0) fail(offset, "seek to an offset that is not a header");
  source_->seek(offset);
  buffer_pos_ = buffer_len_ = 0;
  offset_ = offset;
  ended_ = false;
  data_pending_ = false;
}

void TarReader::close() {
  source_->close(ended_);
}

bool is_meta_name(const std::string& name) {
  const size_t slash = name.find('/');
  const std::string first = name.substr(0, slash);
  return first.size() >= 4 && first.compare(0, 2, "__") == 0 &&
         first.compare(first.size() - 2, 2, "__") == 0;
}

bool split_key(const std::string& name, std::string& key, std::string& extension) {
  const size_t slash = name.rfind('/');
  const size_t base = slash == std::string::npos ? 0 : slash + 1;
  const size_t dot = name.find('.', base);
  if (dot == std::string::npos || dot == base) return false;
  key.assign(name, 0, dot);
  extension.assign(name, dot + 1, std::string::npos);
  for (char& c : extension)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return true;
}

bool SampleReader::next_member() {
  while (tar_.next_header(pending_)) {
    if (is_regular(pending_.type) && !is_meta_name(pending_.name) &&
        split_key(pending_.name, pending_key_, pending_ext_)) {
      has_pending_ = true;
      return true;
    }
    tar_.skip_data(pending_);
  }
  return false;
}

bool SampleReader::next(Sample& sample, bool want_data) {
  sample.fields.clear();
  if (!has_pending_ && !next_member()) return false;
  sample.key = pending_key_;
  sample.start = pending_.start;
  do {
    for (const auto& field : sample.fields)
      if (field.first == pending_ext_)
        throw ShardError(
            tar_.url(), pending_.start,
            str_cat("sample '", sample.key, "' has two files with extension '", pending_ext_, "'"));
    if (want_data) {
      tar_.read_data(pending_);
      sample.fields.emplace_back(pending_ext_, std::move(pending_.data));
    } else {
      tar_.skip_data(pending_);
      sample.fields.emplace_back(pending_ext_, std::string());
    }
    sample.end = pending_.end;
    has_pending_ = false;
  } while (next_member() && pending_key_ == sample.key);
  return true;
}

int64_t SampleReader::skip(int64_t n) {
  Sample sample;
  int64_t skipped = 0;
  while (skipped < n && next(sample, false)) ++skipped;
  return skipped;
}

void SampleReader::seek(int64_t offset) {
  tar_.seek(offset);
  has_pending_ = false;
}

Sample SampleReader::read_at(int64_t offset, int64_t length) {
  seek(offset);
  Sample sample;
  if (!next_member() || pending_.start != offset)
    throw ShardError(tar_.url(), offset, "the index points at no sample (is it stale?)");
  sample.key = pending_key_;
  sample.start = offset;
  do {
    tar_.read_data(pending_);
    sample.fields.emplace_back(pending_ext_, std::move(pending_.data));
    sample.end = pending_.end;
    has_pending_ = false;
  } while (sample.end < offset + length && next_member() && pending_key_ == sample.key);
  // A length that ends inside the sample (a member of the same key follows) is stale too.
  if (sample.end == offset + length && !has_pending_ && next_member() && pending_key_ == sample.key)
    throw ShardError(tar_.url(), offset,
                     str_cat("the index says sample '", sample.key, "' is ", length,
                             " bytes long, the shard has more of it (stale index?)"));
  if (sample.end != offset + length)
    throw ShardError(
        tar_.url(), offset,
        str_cat("the index says sample '", sample.key, "' is ", length,
                " bytes long, the shard has ", sample.end - offset, " (stale index?)"));
  return sample;
}

}  // namespace ember::data
