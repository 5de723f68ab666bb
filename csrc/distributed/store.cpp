// HashStore, PrefixStore, FileStore and the map they share (store.h). TCPStore is in
// tcp_store.cpp.
#include "distributed/store.h"

#include "distributed/wire.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace ember::distributed {
namespace {

using wire::get_u64;
using wire::put_u64;

using Clock = std::chrono::steady_clock;

std::string text(const Bytes& value) {
  return std::string(value.begin(), value.end());
}

Bytes bytes_of(const std::string& s) {
  return Bytes(s.begin(), s.end());
}

std::string key_list(const std::vector<std::string>& keys) {
  std::string out;
  for (const std::string& key : keys) out += (out.empty() ? "" : ", ") + key;
  return out;
}

[[noreturn]] void timed_out(const char* store, const std::vector<std::string>& keys,
                            Milliseconds timeout) {
  EMBER_THROW(distributed::DistStoreError, "[", store, "] timed out after ", timeout.count(),
              " ms waiting for key(s): ", key_list(keys));
}

}  // namespace

// -- KeyValueMap ---------------------------------------------------------------------------------
const Bytes* KeyValueMap::find(const std::string& key) const {
  auto it = map_.find(key);
  return it == map_.end() ? nullptr : &it->second;
}

int64_t KeyValueMap::add(const std::string& key, int64_t delta) {
  int64_t value = 0;
  if (const Bytes* current = find(key)) {
    const std::string s = text(*current);
    char* end = nullptr;
    errno = 0;
    value = std::strtoll(s.c_str(), &end, 10);
    EMBER_CHECK_T(ValueError, !s.empty() && end == s.c_str() + s.size() && errno == 0,
                  "[store add] the value of key '", key, "' is not an integer");
  }
  EMBER_CHECK_T(ValueError, !__builtin_add_overflow(value, delta, &value),
                "[store add] the counter of key '", key, "' overflows int64");
  map_[key] = bytes_of(std::to_string(value));
  return value;
}

bool KeyValueMap::contains_all(const std::vector<std::string>& keys) const {
  for (const std::string& key : keys)
    if (map_.count(key) == 0) return false;
  return true;
}

Bytes KeyValueMap::compare_set(const std::string& key, const Bytes& expected,
                               const Bytes& desired) {
  auto it = map_.find(key);
  if (it == map_.end()) {
    if (expected.empty()) {
      map_[key] = desired;
      return desired;
    }
    return expected;  // as PyTorch's stores: a missing key with a non-empty expectation
  }
  if (it->second == expected) it->second = desired;
  return it->second;
}

// -- HashStore -----------------------------------------------------------------------------------
void HashStore::set(const std::string& key, const Bytes& value) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    map_.set(key, value);
  }
  changed_.notify_all();
}

Bytes HashStore::get(const std::string& key) {
  std::unique_lock<std::mutex> lock(mutex_);
  const std::vector<std::string> keys{key};
  if (!changed_.wait_for(lock, timeout_, [&] { return map_.find(key) != nullptr; }))
    timed_out("HashStore get", keys, timeout_);
  return *map_.find(key);
}

void HashStore::wait(const std::vector<std::string>& keys, const Milliseconds& timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!changed_.wait_for(lock, timeout, [&] { return map_.contains_all(keys); }))
    timed_out("HashStore wait", keys, timeout);
}

int64_t HashStore::add(const std::string& key, int64_t delta) {
  int64_t value = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    value = map_.add(key, delta);
  }
  changed_.notify_all();
  return value;
}

bool HashStore::check(const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> lock(mutex_);
  return map_.contains_all(keys);
}

bool HashStore::delete_key(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  return map_.erase(key);
}

int64_t HashStore::num_keys() {
  std::lock_guard<std::mutex> lock(mutex_);
  return map_.size();
}

Bytes HashStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  Bytes value;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    value = map_.compare_set(key, expected, desired);
  }
  changed_.notify_all();
  return value;
}

// -- PrefixStore ---------------------------------------------------------------------------------
std::vector<std::string> PrefixStore::prefixed(const std::vector<std::string>& keys) const {
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (const std::string& key : keys) out.push_back(prefix_ + key);
  return out;
}

void PrefixStore::wait(const std::vector<std::string>& keys, const Milliseconds& timeout) {
  base_->wait(prefixed(keys), timeout);
}

bool PrefixStore::check(const std::vector<std::string>& keys) {
  return base_->check(prefixed(keys));
}

// -- FileStore -----------------------------------------------------------------------------------
// A record: 'S' or 'D', then the key and (for 'S') the value, each as a little-endian uint64
// length and the bytes. Lengths are bounded so that a corrupt file is an error, not a huge
// allocation.
namespace {

constexpr uint64_t kMaxRecordPart = uint64_t{1} << 32;
constexpr const char* kReleasedKey = "__ember_filestore_released";

}  // namespace

// The file opened and exclusively locked, with the log replayed into the map: every operation
// runs inside one, so the processes see one order of operations.
class FileStore::Locked {
 public:
  explicit Locked(FileStore& store) : store_(store), thread_lock_(store.mutex_) {
    fd_ = ::open(store.path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      EMBER_THROW(distributed::DistStoreError, "[FileStore] cannot open '", store.path_,
                  "': ", std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        const int err = errno;
        ::close(fd_);
        EMBER_THROW(distributed::DistStoreError, "[FileStore] cannot lock '", store.path_,
                    "': ", std::strerror(err));
      }
    }
    replay();
  }
  ~Locked() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;

  void append_set(const std::string& key, const Bytes& value) {
    std::string record("S");
    put_u64(record, key.size());
    record += key;
    put_u64(record, value.size());
    record.append(value.data(), value.size());
    append(record);
    store_.map_.set(key, value);
  }
  void append_delete(const std::string& key) {
    std::string record("D");
    put_u64(record, key.size());
    record += key;
    append(record);
    store_.map_.erase(key);
  }
  KeyValueMap& map() { return store_.map_; }

 private:
  void replay() {
    struct stat st {};
    if (::fstat(fd_, &st) != 0)
      EMBER_THROW(distributed::DistStoreError, "[FileStore] cannot stat '", store_.path_, "'");
    const int64_t size = st.st_size;
    if (size < store_.offset_) {  // the file was removed and made anew: start over
      store_.map_ = KeyValueMap();
      store_.offset_ = 0;
    }
    if (size == store_.offset_) return;
    std::string data(static_cast<size_t>(size - store_.offset_), '\0');
    size_t got = 0;
    while (got < data.size()) {
      const ssize_t n =
          ::pread(fd_, &data[got], data.size() - got, store_.offset_ + static_cast<off_t>(got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    data.resize(got);
    size_t at = 0;
    while (at < data.size()) {
      const size_t start = at;
      const char op = data[at++];
      uint64_t key_size = 0, value_size = 0;
      if ((op != 'S' && op != 'D') || !get_u64(data, at, key_size) || key_size > kMaxRecordPart)
        corrupt(start);
      if (data.size() - at < key_size) {
        truncated(start);
        return;
      }
      std::string key = data.substr(at, key_size);
      at += key_size;
      if (op == 'D') {
        store_.map_.erase(key);
        store_.offset_ += static_cast<int64_t>(at - start);
        continue;
      }
      if (data.size() - at < 8) {
        truncated(start);
        return;
      }
      get_u64(data, at, value_size);
      if (value_size > kMaxRecordPart) corrupt(start);
      if (data.size() - at < value_size) {
        truncated(start);
        return;
      }
      store_.map_.set(key, Bytes(data.begin() + at, data.begin() + at + value_size));
      at += value_size;
      store_.offset_ += static_cast<int64_t>(at - start);
    }
  }
  // A record cut short: records are written whole under the lock, so only a writer that died
  // mid-write leaves one. Drop it, so the next record starts at a record boundary.
  void truncated(size_t) {
    if (::ftruncate(fd_, store_.offset_) != 0)
      EMBER_THROW(distributed::DistStoreError, "[FileStore] '", store_.path_,
                  "' ends in a partial record");
  }
  [[noreturn]] void corrupt(size_t start) {
    EMBER_THROW(distributed::DistStoreError, "[FileStore] '", store_.path_,
                "' is not a store file (bad record at byte ",
                store_.offset_ + static_cast<int64_t>(start), ")");
  }
  void append(const std::string& record) {
    size_t done = 0;
    while (done < record.size()) {
      const ssize_t n = ::pwrite(fd_, record.data() + done, record.size() - done,
                                 store_.offset_ + static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        EMBER_THROW(distributed::DistStoreError, "[FileStore] cannot write '", store_.path_,
                    "': ", std::strerror(errno));
      done += static_cast<size_t>(n);
    }
    store_.offset_ += static_cast<int64_t>(record.size());
  }

  FileStore& store_;
  std::lock_guard<std::mutex> thread_lock_;
  int fd_ = -1;
};

FileStore::FileStore(std::string path, int world_size, Milliseconds timeout)
    : Store(timeout), path_(std::move(path)), world_size_(world_size) {
  EMBER_CHECK_T(ValueError, !path_.empty(), "[FileStore] the path is empty");
  Locked locked(*this);  // opens (creates) the file now, so errors show at construction
}

FileStore::~FileStore() {
  if (world_size_ <= 0) return;
  try {
    bool last = false;
    {
      Locked locked(*this);
      const int64_t released = locked.map().add(kReleasedKey, 1);
      locked.append_set(kReleasedKey, *locked.map().find(kReleasedKey));
      last = released >= world_size_;
    }
    if (last) ::unlink(path_.c_str());
  } catch (...) {  // a destructor reports nothing; the file stays
  }
}

void FileStore::set(const std::string& key, const Bytes& value) {
  Locked locked(*this);
  locked.append_set(key, value);
}

Bytes FileStore::get(const std::string& key) {
  wait({key}, timeout_);
  Locked locked(*this);
  const Bytes* value = locked.map().find(key);
  if (value == nullptr) timed_out("FileStore get", {key}, timeout_);  // deleted meanwhile
  return *value;
}

void FileStore::wait(const std::vector<std::string>& keys, const Milliseconds& timeout) {
  const auto deadline = Clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  while (true) {
    {
      Locked locked(*this);
      if (locked.map().contains_all(keys)) return;
    }
    if (Clock::now() >= deadline) timed_out("FileStore wait", keys, timeout);
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

int64_t FileStore::add(const std::string& key, int64_t delta) {
  Locked locked(*this);
  const int64_t value = locked.map().add(key, delta);
  locked.append_set(key, *locked.map().find(key));
  return value;
}

bool FileStore::check(const std::vector<std::string>& keys) {
  Locked locked(*this);
  return locked.map().contains_all(keys);
}

bool FileStore::delete_key(const std::string& key) {
  Locked locked(*this);
  if (locked.map().find(key) == nullptr) return false;
  locked.append_delete(key);
  return true;
}

int64_t FileStore::num_keys() {
  Locked locked(*this);
  return locked.map().size() - (locked.map().find(kReleasedKey) != nullptr ? 1 : 0);
}

Bytes FileStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  Locked locked(*this);
  const Bytes* before = locked.map().find(key);
  const bool present = before != nullptr;
  const Bytes old = present ? *before : Bytes();
  const Bytes value = locked.map().compare_set(key, expected, desired);
  if (!present ? (expected.empty()) : (old == expected)) locked.append_set(key, value);
  return value;
}

}  // namespace ember::distributed
