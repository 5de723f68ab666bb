// Key-value stores for process-group rendezvous (ember.distributed's TCPStore, FileStore,
// HashStore, PrefixStore). Each is a gloo::rendezvous::Store, so Gloo's connectFullMesh uses it
// directly, plus the operations PyTorch's stores have (add, check, delete, compare_set,
// num_keys). Values are bytes; add() keeps its counter as decimal text, as PyTorch's stores do,
// so get() of a counter gives b"3".
#pragma once
#include <gloo/rendezvous/store.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "distributed/errors.h"

namespace ember::distributed {

using Bytes = std::vector<char>;
using Milliseconds = std::chrono::milliseconds;

class Store : public gloo::rendezvous::Store {
 public:
  explicit Store(Milliseconds timeout) : timeout_(timeout) {}

  // gloo's interface: get() and wait() block until the keys exist, at most timeout().
  void set(const std::string& key, const Bytes& value) override = 0;
  Bytes get(const std::string& key) override = 0;
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const Milliseconds& timeout) override = 0;

  virtual int64_t add(const std::string& key, int64_t delta) = 0;
  virtual bool check(const std::vector<std::string>& keys) = 0;
  virtual bool delete_key(const std::string& key) = 0;
  virtual int64_t num_keys() = 0;
  // Sets `desired` when the current value is `expected` (or the key is missing and `expected`
  // is empty); returns the value after the call.
  virtual Bytes compare_set(const std::string& key, const Bytes& expected,
                            const Bytes& desired) = 0;

  Milliseconds timeout() const { return timeout_; }
  void set_timeout(Milliseconds timeout) { timeout_ = timeout; }

 protected:
  Milliseconds timeout_;
};

// The operations of every store on one in-memory map, under the caller's lock. Shared by
// HashStore, the TCP server and FileStore (which replays its file into one).
class KeyValueMap {
 public:
  void set(const std::string& key, const Bytes& value) { map_[key] = value; }
  const Bytes* find(const std::string& key) const;
  int64_t add(const std::string& key, int64_t delta);  // ValueError if not an integer
  bool contains_all(const std::vector<std::string>& keys) const;
  bool erase(const std::string& key) { return map_.erase(key) > 0; }
  int64_t size() const { return static_cast<int64_t>(map_.size()); }
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired);

 private:
  std::map<std::string, Bytes> map_;
};

// In-process store (threads of one process), as torch.distributed.HashStore.
class HashStore : public Store {
 public:
  explicit HashStore(Milliseconds timeout = std::chrono::seconds(300)) : Store(timeout) {}
  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  using Store::wait;
  void wait(const std::vector<std::string>& keys, const Milliseconds& timeout) override;
  int64_t add(const std::string& key, int64_t delta) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  KeyValueMap map_;
};

// Every key of `base` under "prefix/", as torch.distributed.PrefixStore (one per process group).
class PrefixStore : public Store {
 public:
  PrefixStore(std::string prefix, std::shared_ptr<Store> base)
      : Store(base->timeout()), prefix_(std::move(prefix) + "/"), base_(std::move(base)) {}
  void set(const std::string& key, const Bytes& value) override {
    base_->set(prefix_ + key, value);
  }
  Bytes get(const std::string& key) override {  // bounded by this store's timeout
    base_->wait({prefix_ + key}, timeout_);
    return base_->get(prefix_ + key);
  }
  using Store::wait;
  void wait(const std::vector<std::string>& keys, const Milliseconds& timeout) override;
  int64_t add(const std::string& key, int64_t delta) override {
    return base_->add(prefix_ + key, delta);
  }
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override { return base_->delete_key(prefix_ + key); }
  int64_t num_keys() override { return base_->num_keys(); }
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override {
    return base_->compare_set(prefix_ + key, expected, desired);
  }
  const std::shared_ptr<Store>& base() const { return base_; }

 private:
  std::vector<std::string> prefixed(const std::vector<std::string>& keys) const;
  std::string prefix_;
  std::shared_ptr<Store> base_;
};

// A store in one file that processes sharing a file system use together, as
// torch.distributed.FileStore: an append-only log of records, each written with one write()
// under an exclusive flock and replayed by readers. The last process to release the store
// (world_size of them, counted in the file) removes the file.
class FileStore : public Store {
 public:
  FileStore(std::string path, int world_size, Milliseconds timeout = std::chrono::seconds(300));
  ~FileStore() override;
  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  using Store::wait;
  void wait(const std::vector<std::string>& keys, const Milliseconds& timeout) override;
  int64_t add(const std::string& key, int64_t delta) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  const std::string& path() const { return path_; }

 private:
  class Locked;
  std::string path_;
  int world_size_;
  std::mutex mutex_;  // threads of this process; flock orders the processes
  KeyValueMap map_;   // the log replayed up to offset_
  int64_t offset_ = 0;
};

// A client of a TCPStore server; with is_master the server runs in this process (a thread).
class TCPStoreServer;
class TCPStore : public Store {
 public:
  TCPStore(const std::string& host, int port, bool is_master, Milliseconds timeout,
           bool wait_for_workers, int world_size);
  ~TCPStore() override;
  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  using Store::wait;
  void wait(const std::vector<std::string>& keys, const Milliseconds& timeout) override;
  int64_t add(const std::string& key, int64_t delta) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  int port() const { return port_; }
  const std::string& host() const { return host_; }

  class Connection;
  using Deadline = std::chrono::steady_clock::time_point;

 private:
  void connect();
  void exchange(const std::string& request, const std::string& what, Milliseconds timeout,
                const std::function<bool(Connection&, Deadline)>& read);
  std::string host_;
  int port_;
  std::unique_ptr<TCPStoreServer> server_;
  std::mutex mutex_;  // one request at a time on the connection
  std::unique_ptr<Connection> connection_;
};

}  // namespace ember::distributed
