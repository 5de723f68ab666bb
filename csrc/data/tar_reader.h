// A streaming reader of POSIX tar archives (ustar, GNU long names, pax headers) and the WebDataset
// grouping of its files into samples. Sizes and header checksums are validated; a truncated or
// corrupt archive raises ShardError with the byte offset of the bad header or entry.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "data/byte_source.h"

namespace ember::data {

struct TarEntry {
  std::string name;
  char type = '0';
  int64_t start = 0;  // offset of the entry's first header (a long-name or pax header included)
  int64_t data_offset = 0;
  int64_t size = 0;
  int64_t end = 0;   // offset just past its padded data
  std::string data;  // filled only when asked for
};

class TarReader {
 public:
  explicit TarReader(std::unique_ptr<ByteSource> source);
  // The next entry's header (any type; long-name and pax headers are applied, not returned);
  // false at the end of the archive. Its data must then be consumed by read_data or skip_data.
  bool next_header(TarEntry& entry);
  void read_data(TarEntry& entry);
  void skip_data(const TarEntry& entry);
  // Next header at `offset` (a header boundary); only for seekable sources.
  void seek(int64_t offset);
  int64_t offset() const { return offset_; }
  const std::string& url() const { return source_->url(); }
  bool seekable() const { return source_->seekable(); }
  void close();

 private:
  // Exactly `n` bytes or fewer at the end of the stream; returns how many.
  size_t read_exact(char* dst, size_t n);
  // Past `n` bytes of `entry`'s data (seeking when possible); truncation raises.
  void skip(int64_t n, const TarEntry& entry);
  // The data of a long-name or pax header, bounded in size.
  std::string read_meta(const TarEntry& entry);
  [[noreturn]] void fail(int64_t at, const std::string& what) const;

  std::unique_ptr<ByteSource> source_;
  std::vector<char> buffer_;
  size_t buffer_pos_ = 0;
  size_t buffer_len_ = 0;
  int64_t offset_ = 0;  // stream offset of the next unread byte
  bool ended_ = false;
  bool data_pending_ = false;
};

struct Sample {
  std::string key;
  std::vector<std::pair<std::string, std::string>> fields;  // (extension, bytes), in tar order
  int64_t start = 0;
  int64_t end = 0;
};

// WebDataset's split of a member name: the key is everything up to the first dot of the last path
// component, the extension the rest (lower-cased). False when the last component has no dot or
// starts with one (such files belong to no sample).
bool split_key(const std::string& name, std::string& key, std::string& extension);
// Names WebDataset skips entirely: a first path component "__...__" (metadata).
bool is_meta_name(const std::string& name);

class SampleReader {
 public:
  explicit SampleReader(std::unique_ptr<ByteSource> source) : tar_(std::move(source)) {}
  // The next sample; false at the end. Without `want_data` the fields hold empty strings.
  bool next(Sample& sample, bool want_data);
  // The sample whose first header is at `offset`, within `length` bytes (from an index).
  Sample read_at(int64_t offset, int64_t length);
  // Skips up to `n` samples; returns how many were skipped.
  int64_t skip(int64_t n);
  // Positions at a sample's first header (from an index).
  void seek(int64_t offset);
  // Offset of the next sample's first header (or of the end).
  int64_t offset() const { return has_pending_ ? pending_.start : tar_.offset(); }
  const std::string& url() const { return tar_.url(); }
  bool seekable() const { return tar_.seekable(); }
  void close() { tar_.close(); }

 private:
  // The header of the next regular member that belongs to a sample, with its key and extension;
  // its data stays unread until the sample it starts is read or skipped.
  bool next_member();
  TarReader tar_;
  TarEntry pending_;
  std::string pending_key_, pending_ext_;
  bool has_pending_ = false;
};

}  // namespace ember::data
