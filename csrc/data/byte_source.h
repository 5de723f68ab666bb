// Byte streams that tar shards are read from: local files, `pipe:` commands, HTTP(S) URLs, and
// gzip-compressed forms of each. Readers pull bytes with read(); only local files seek.
// Every failure is a ShardError naming the URL and the byte offset reached.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace ember::data {

// A shard that cannot be opened or read, or whose bytes are not a valid tar stream. Its own class
// (not ember::Error) so the bindings can raise ember.data.ShardError with .url and .offset.
class ShardError : public std::runtime_error {
 public:
  ShardError(std::string url, int64_t offset, const std::string& what);
  const std::string& url() const { return url_; }
  int64_t offset() const { return offset_; }

 private:
  std::string url_;
  int64_t offset_;
};

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Up to `n` bytes into `dst`; 0 only at the end of the stream. Blocks until some arrive.
  virtual size_t read(char* dst, size_t n) = 0;
  virtual bool seekable() const { return false; }
  // Absolute byte position; only when seekable().
  virtual void seek(int64_t offset);
  // Total length in bytes when known (local regular files), else -1.
  virtual int64_t size() const { return -1; }
  // Ends the stream. `finished`: the reader reached the end of the archive, so a `pipe:` command
  // is drained to its end and a failing exit status raises here; otherwise the command is stopped
  // and its status ignored (the reader chose to stop early).
  virtual void close(bool finished = false) { (void)finished; }
  const std::string& url() const { return url_; }

 protected:
  explicit ByteSource(std::string url) : url_(std::move(url)) {}
  std::string url_;
};

// Opens `url`: "pipe:CMD" runs CMD with /bin/sh and reads its standard output; "http://..." and
// "https://..." stream through libcurl; "file:PATH" and plain paths open the file. gzip data
// (by its magic bytes) is inflated on the fly.
std::unique_ptr<ByteSource> open_source(const std::string& url);

// Whether this build streams http(s) URLs itself (libcurl was found at build time).
bool http_supported();

}  // namespace ember::data
