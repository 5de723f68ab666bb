#include "data/byte_source.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "core/error.h"

extern char** environ;

namespace ember::data {

ShardError::ShardError(std::string url, int64_t offset, const std::string& what)
    : std::runtime_error(str_cat(url, " (byte ", offset, "): ", what)),
      url_(std::move(url)),
      offset_(offset) {}

void ByteSource::seek(int64_t offset) {
  throw ShardError(url_, offset, "this source cannot seek (only local files can)");
}

namespace {

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

size_t read_fd(int fd, char* dst, size_t n, const std::string& url, int64_t position) {
  for (;;) {
    const ssize_t got = ::read(fd, dst, n);
    if (got >= 0) return static_cast<size_t>(got);
    if (errno == EINTR) continue;
    throw ShardError(url, position, str_cat("read failed: ", std::strerror(errno)));
  }
}

class FileSource final : public ByteSource {
 public:
  FileSource(std::string url, const std::string& path) : ByteSource(std::move(url)) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw ShardError(url_, 0, str_cat("cannot open: ", std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && S_ISDIR(st.st_mode)) {
      ::close(fd_);
      fd_ = -1;
      throw ShardError(url_, 0, "is a directory, not a tar shard");
    }
    seekable_ = S_ISREG(st.st_mode) && ::lseek(fd_, 0, SEEK_CUR) >= 0;
    if (seekable_) size_ = static_cast<int64_t>(st.st_size);
  }
  ~FileSource() override { FileSource::close(false); }
  size_t read(char* dst, size_t n) override {
    const size_t got = read_fd(fd_, dst, n, url_, position_);
    position_ += static_cast<int64_t>(got);
    return got;
  }
  bool seekable() const override { return seekable_; }
  int64_t size() const override { return size_; }
  void seek(int64_t offset) override {
    if (!seekable_ || ::lseek(fd_, offset, SEEK_SET) < 0) ByteSource::seek(offset);
    position_ = offset;
  }
  void close(bool) override {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  bool seekable_ = false;
  int64_t size_ = -1;
  int64_t position_ = 0;
};

// `pipe:CMD`: CMD runs under /bin/sh with its standard output on a pipe. At the end of its output
// the exit status is checked; closed before that, the command is sent SIGTERM (it may be a
// download that would otherwise run on) and its status is not an error.
class PipeSource final : public ByteSource {
 public:
  PipeSource(std::string url, const std::string& command) : ByteSource(std::move(url)) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
      throw ShardError(url_, 0, str_cat("pipe() failed: ", std::strerror(errno)));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
    const int rc =
        posix_spawn(&pid_, "/bin/sh", &actions, nullptr, const_cast<char**>(argv), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (rc != 0) {
      ::close(fds[0]);
      throw ShardError(url_, 0, str_cat("cannot start the command: ", std::strerror(rc)));
    }
    fd_ = fds[0];
  }
  ~PipeSource() override {
    try {
      stop();
    } catch (...) {  // a destructor reports nothing; close() is where failures surface
    }
  }
  size_t read(char* dst, size_t n) override {
    const size_t got = read_fd(fd_, dst, n, url_, position_);
    position_ += static_cast<int64_t>(got);
    if (got == 0 && n > 0) at_end_ = true;
    return got;
  }
  void close(bool finished) override {
    if (finished && fd_ >= 0) {
      char scratch[8192];
      while (read(scratch, sizeof(scratch)) > 0) {
      }
    }
    const int status = stop();
    if (finished && status != 0)
      throw ShardError(url_, position_, str_cat("the command exited with status ", status));
  }

 private:
  int stop() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (pid_ <= 0) return 0;
    if (!at_end_) ::kill(pid_, SIGTERM);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 0;
  }
  int fd_ = -1;
  pid_t pid_ = -1;
  int64_t position_ = 0;
  bool at_end_ = false;
};

// Bytes already read while sniffing, then the rest of `inner`.
class PrefixedSource final : public ByteSource {
 public:
  PrefixedSource(std::string prefix, std::unique_ptr<ByteSource> inner)
      : ByteSource(inner->url()), prefix_(std::move(prefix)), inner_(std::move(inner)) {}
  size_t read(char* dst, size_t n) override {
    if (pos_ < prefix_.size()) {
      const size_t take = std::min(n, prefix_.size() - pos_);
      std::memcpy(dst, prefix_.data() + pos_, take);
      pos_ += take;
      return take;
    }
    return inner_->read(dst, n);
  }
  void close(bool finished) override { inner_->close(finished); }

 private:
  std::string prefix_;
  size_t pos_ = 0;
  std::unique_ptr<ByteSource> inner_;
};

// gzip (one or more members, as `cat a.gz b.gz` makes) inflated with zlib.
class GzipSource final : public ByteSource {
 public:
  explicit GzipSource(std::unique_ptr<ByteSource> inner)
      : ByteSource(inner->url()), inner_(std::move(inner)), input_(1 << 16) {
    std::memset(&z_, 0, sizeof(z_));
    if (inflateInit2(&z_, 15 + 16) != Z_OK) throw ShardError(url_, 0, "zlib init failed");
  }
  ~GzipSource() override { inflateEnd(&z_); }
  size_t read(char* dst, size_t n) override {
    if (n == 0 || done_) return 0;
    z_.next_out = reinterpret_cast<Bytef*>(dst);
    z_.avail_out = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    while (z_.avail_out == static_cast<uInt>(std::min<size_t>(n, 1u << 30))) {
      if (z_.avail_in == 0) {
        const size_t got = inner_->read(input_.data(), input_.size());
        compressed_ += static_cast<int64_t>(got);
        if (got == 0) {
          if (in_member_)
            throw ShardError(url_, compressed_, "truncated gzip stream (it ends inside a member)");
          done_ = true;
          break;
        }
        z_.next_in = reinterpret_cast<Bytef*>(input_.data());
        z_.avail_in = static_cast<uInt>(got);
      }
      if (!in_member_ && *z_.next_in != 0x1f) {  // trailing padding after the last member
        done_ = true;
        break;
      }
      in_member_ = true;
      const int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        in_member_ = false;
        inflateReset(&z_);  // another member may follow
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        throw ShardError(url_, compressed_,
                         str_cat("corrupt gzip data: ", z_.msg ? z_.msg : "inflate failed"));
      }
    }
    return std::min<size_t>(n, 1u << 30) - z_.avail_out;
  }
  void close(bool finished) override { inner_->close(finished); }

 private:
  std::unique_ptr<ByteSource> inner_;
  std::vector<char> input_;
  z_stream z_;
  int64_t compressed_ = 0;
  bool in_member_ = false;
  bool done_ = false;
};

}  // namespace

std::unique_ptr<ByteSource> open_http_source(const std::string& url);  // http_source.cpp

std::unique_ptr<ByteSource> open_source(const std::string& url) {
  std::unique_ptr<ByteSource> raw;
  if (starts_with(url, "pipe:")) {
    raw = std::make_unique<PipeSource>(url, url.substr(5));
  } else if (starts_with(url, "http://") || starts_with(url, "https://")) {
    raw = open_http_source(url);
  } else if (starts_with(url, "file://")) {
    raw = std::make_unique<FileSource>(url, url.substr(7));
  } else if (starts_with(url, "file:")) {
    raw = std::make_unique<FileSource>(url, url.substr(5));
  } else {
    raw = std::make_unique<FileSource>(url, url);
  }
  // Sniff the gzip magic (1f 8b): a tar header never starts with it (0x1f is not a name byte
  // any writer emits first, and 0x8b is not ASCII).
  char magic[2];
  size_t have = 0;
  while (have < 2) {
    const size_t got = raw->read(magic + have, 2 - have);
    if (got == 0) break;
    have += got;
  }
  const bool gzip = have == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
                    static_cast<unsigned char>(magic[1]) == 0x8b;
  if (raw->seekable()) {
    raw->seek(0);
  } else {
    raw = std::make_unique<PrefixedSource>(std::string(magic, have), std::move(raw));
  }
  if (gzip) return std::make_unique<GzipSource>(std::move(raw));
  return raw;
}

}  // namespace ember::data
