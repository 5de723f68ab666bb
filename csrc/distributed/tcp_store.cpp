// TCPStore: a key-value server on one rank (a thread with poll()) and a blocking client per
// store object. A request is one command byte and its fields; a GET or WAIT for keys that do
// not exist yet parks the client on the server until another client sets them, and the client
// side bounds that wait with its timeout (then drops the connection, so a late answer is never
// read as the answer to the next request, and reconnects on its next call).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>
#include <list>
#include <thread>

#include "distributed/store.h"
#include "distributed/wire.h"

namespace ember::distributed {
namespace {

using Clock = std::chrono::steady_clock;

enum Command : uint8_t {
  kSet = 1,
  kGet,
  kAdd,
  kCheck,
  kDelete,
  kNumKeys,
  kWait,
  kCompareSet,
};

constexpr uint64_t kMaxField = uint64_t{1} << 32;  // a longer field means a stray connection
constexpr const char* kJoinedKey = "__ember_tcpstore_joined";

using wire::decode_u64;
using wire::put_u64;
void put_field(std::string& out, const char* data, size_t size) {
  put_u64(out, size);
  out.append(data, size);
}
void put_field(std::string& out, const std::string& s) {
  put_field(out, s.data(), s.size());
}
void put_field(std::string& out, const Bytes& b) {
  put_field(out, b.data(), b.size());
}

// Reads fields from a buffer that may not hold a whole request yet.
class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  bool u8(uint8_t& v) {
    if (in_.size() - at_ < 1) return false;
    v = static_cast<uint8_t>(in_[at_++]);
    return true;
  }
  bool u64(uint64_t& v) { return wire::get_u64(in_, at_, v); }
  // false: incomplete; throws on an impossible length
  bool field(std::string& out) {
    uint64_t n = 0;
    if (!u64(n)) return false;
    if (n > kMaxField) throw std::runtime_error("field too long");
    if (in_.size() - at_ < n) return false;
    out.assign(in_, at_, n);
    at_ += n;
    return true;
  }
  size_t consumed() const { return at_; }

 private:
  const std::string& in_;
  size_t at_ = 0;
};

Bytes to_bytes(const std::string& s) {
  return Bytes(s.begin(), s.end());
}

std::string error_text(int err) {
  return std::strerror(err);
}

}  // namespace

// -- the server ----------------------------------------------------------------------------------
class TCPStoreServer {
 public:
  explicit TCPStoreServer(int port) {
    listen_fd_ = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool v6 = listen_fd_ >= 0;
    if (!v6) listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0)
      EMBER_THROW(distributed::DistNetworkError,
                  "[TCPStore] cannot create a socket: ", error_text(errno));
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int rc;
    if (v6) {
      int zero = 0;  // dual stack: IPv4 clients too
      ::setsockopt(listen_fd_, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
      sockaddr_in6 addr{};
      addr.sin6_family = AF_INET6;
      addr.sin6_addr = in6addr_any;
      addr.sin6_port = htons(static_cast<uint16_t>(port));
      rc = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    } else {
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_ANY);
      addr.sin_port = htons(static_cast<uint16_t>(port));
      rc = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    }
    if (rc != 0 || ::listen(listen_fd_, 1024) != 0) {
      const int err = errno;
      ::close(listen_fd_);
      EMBER_THROW(distributed::DistNetworkError, "[TCPStore] the server cannot listen on port ",
                  port, ": ", error_text(err),
                  err == EADDRINUSE ? " (another process uses it: pick another MASTER_PORT)" : "");
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
    port_ = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                        : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    if (::pipe2(wake_, O_CLOEXEC) != 0) {
      ::close(listen_fd_);
      EMBER_THROW(distributed::DistNetworkError,
                  "[TCPStore] cannot create a pipe: ", error_text(errno));
    }
    thread_ = std::thread([this] { run(); });
  }

  ~TCPStoreServer() {
    stop_ = true;
    char c = 0;
    while (::write(wake_[1], &c, 1) < 0 && errno == EINTR) {
    }
    thread_.join();
    for (Client& client : clients_) ::close(client.fd);
    ::close(listen_fd_);
    ::close(wake_[0]);
    ::close(wake_[1]);
  }

  int port() const { return port_; }

 private:
  struct Client {
    int fd;
    std::string in;
    std::string out;
    std::vector<std::string> waiting_for;  // a parked GET or WAIT
    uint8_t waiting_command = 0;
  };

  void run() {
    std::vector<pollfd> fds;
    while (!stop_) {
      fds.clear();
      fds.push_back({wake_[0], POLLIN, 0});
      fds.push_back({listen_fd_, POLLIN, 0});
      for (Client& client : clients_) {
        short events = client.out.empty() ? POLLIN : static_cast<short>(POLLIN | POLLOUT);
        fds.push_back({client.fd, events, 0});
      }
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[0].revents) return;
      if (fds[1].revents & POLLIN) accept_client();
      size_t i = 2;
      for (auto it = clients_.begin(); it != clients_.end(); ++i) {
        // Clients accepted in this round have no pollfd yet.
        if (i >= fds.size()) break;
        if (!serve(*it, fds[i].revents)) {
          ::close(it->fd);
          it = clients_.erase(it);
        } else {
          ++it;
        }
      }
    }
  }

  void accept_client() {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    clients_.push_back(Client{fd, {}, {}, {}, 0});
  }

  // false: drop the client
  bool serve(Client& client, short revents) {
    if (revents & (POLLERR | POLLNVAL)) return false;
    if (revents & (POLLIN | POLLHUP)) {
      char buffer[65536];
      while (true) {
        const ssize_t n = ::recv(client.fd, buffer, sizeof buffer, 0);
        if (n > 0) {
          client.in.append(buffer, static_cast<size_t>(n));
          continue;
        }
        if (n == 0) return false;  // closed
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        return false;
      }
      try {
        handle_requests(client);
      } catch (const std::exception&) {
        return false;  // garbage: not one of our clients
      }
    }
    return flush(client);
  }

  bool flush(Client& client) {
    while (!client.out.empty()) {
      const ssize_t n = ::send(client.fd, client.out.data(), client.out.size(), MSG_NOSIGNAL);
      if (n > 0) {
        client.out.erase(0, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      return false;
    }
    return true;
  }

  void handle_requests(Client& client) {
    while (client.waiting_command == 0 && !client.in.empty()) {
      Reader reader(client.in);
      if (!handle_one(client, reader)) return;  // incomplete
      client.in.erase(0, reader.consumed());
    }
  }

  bool handle_one(Client& client, Reader& r) {
    uint8_t command = 0;
    if (!r.u8(command)) return false;
    std::string key, a, b;
    switch (command) {
      case kSet:
        if (!r.field(key) || !r.field(a)) return false;
        map_.set(key, to_bytes(a));
        client.out.push_back(1);
        wake_waiters();
        return true;
      case kGet:
        if (!r.field(key)) return false;
        park(client, kGet, {key});
        return true;
      case kAdd: {
        uint64_t delta = 0;
        if (!r.field(key) || !r.u64(delta)) return false;
        int64_t value = 0;
        uint8_t ok = 1;
        try {
          value = map_.add(key, static_cast<int64_t>(delta));
        } catch (const Error&) {
          ok = 0;
        }
        client.out.push_back(static_cast<char>(ok));
        put_u64(client.out, static_cast<uint64_t>(value));
        wake_waiters();
        return true;
      }
      case kCheck:
      case kWait: {
        uint64_t n = 0;
        if (!r.u64(n)) return false;
        if (n > kMaxField) throw std::runtime_error("too many keys");
        std::vector<std::string> keys(n);
        for (std::string& k : keys)
          if (!r.field(k)) return false;
        if (command == kCheck) {
          client.out.push_back(map_.contains_all(keys) ? 1 : 0);
        } else {
          park(client, kWait, std::move(keys));
        }
        return true;
      }
      case kDelete:
        if (!r.field(key)) return false;
        client.out.push_back(map_.erase(key) ? 1 : 0);
        return true;
      case kNumKeys:
        put_u64(client.out, static_cast<uint64_t>(map_.size()));
        return true;
      case kCompareSet: {
        if (!r.field(key) || !r.field(a) || !r.field(b)) return false;
        const Bytes value = map_.compare_set(key, to_bytes(a), to_bytes(b));
        put_field(client.out, value);
        wake_waiters();
        return true;
      }
      default:
        throw std::runtime_error("unknown command");
    }
  }

  void park(Client& client, uint8_t command, std::vector<std::string> keys) {
    client.waiting_command = command;
    client.waiting_for = std::move(keys);
    answer_if_ready(client);
  }

  void answer_if_ready(Client& client) {
    if (client.waiting_command == 0 || !map_.contains_all(client.waiting_for)) return;
    if (client.waiting_command == kGet) {
      put_field(client.out, *map_.find(client.waiting_for[0]));
    } else {
      client.out.push_back(1);
    }
    client.waiting_command = 0;
    client.waiting_for.clear();
  }

  // After a write: answer parked clients whose keys now exist, and go on with what they sent
  // after the parked request (nothing, for Ember's clients).
  void wake_waiters() {
    for (Client& other : clients_) {
      if (other.waiting_command == 0) continue;
      answer_if_ready(other);
      if (other.waiting_command == 0) {
        try {
          handle_requests(other);
        } catch (const std::exception&) {
          other.in.clear();
        }
        flush(other);
      }
    }
  }

  int listen_fd_ = -1;
  int port_ = 0;
  int wake_[2] = {-1, -1};
  std::atomic<bool> stop_{false};
  std::list<Client> clients_;
  KeyValueMap map_;
  std::thread thread_;
};

// -- the client ----------------------------------------------------------------------------------
class TCPStore::Connection {
 public:
  Connection(const std::string& host, int port, Milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    std::string last_error = "no address";
    auto pause = std::chrono::milliseconds(10);
    while (true) {
      if (try_connect(host, port, last_error)) return;
      if (Clock::now() + pause >= deadline)
        EMBER_THROW(distributed::DistNetworkError, "[TCPStore] timed out after ", timeout.count(),
                    " ms connecting to ", host, ":", port, " (", last_error,
                    "): is the rank-0 process running, and MASTER_ADDR/MASTER_PORT right?");
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(500));
    }
  }
  ~Connection() {
    if (fd_ >= 0) ::close(fd_);
  }

  void send_all(const std::string& data) {
    size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        EMBER_THROW(distributed::DistNetworkError,
                    "[TCPStore] lost the connection to the store server: ", error_text(errno));
      done += static_cast<size_t>(n);
    }
  }
  // Reads exactly n bytes before the deadline; false on timeout.
  bool read_exact(char* out, size_t n, Clock::time_point deadline) {
    size_t done = 0;
    while (done < n) {
      const auto left = std::chrono::duration_cast<Milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return false;
      pollfd pfd{fd_, POLLIN, 0};
      const int rc = ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left, 1 << 30)));
      if (rc < 0 && errno == EINTR) continue;
      if (rc == 0) return false;
      const ssize_t got = ::recv(fd_, out + done, n - done, 0);
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (got <= 0)
        EMBER_THROW(distributed::DistNetworkError,
                    "[TCPStore] the store server closed the connection (did rank 0 exit?)");
      done += static_cast<size_t>(got);
    }
    return true;
  }

 private:
  bool try_connect(const std::string& host, int port, std::string& error) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const std::string service = std::to_string(port);
    const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
    if (rc != 0) {
      error = std::string("cannot resolve host: ") + ::gai_strerror(rc);
      return false;
    }
    for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
      const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        fd_ = fd;
        ::freeaddrinfo(found);
        return true;
      }
      error = error_text(errno);
      ::close(fd);
    }
    ::freeaddrinfo(found);
    return false;
  }
  int fd_ = -1;
};

TCPStore::TCPStore(const std::string& host, int port, bool is_master, Milliseconds timeout,
                   bool wait_for_workers, int world_size)
    : Store(timeout), host_(host), port_(port) {
  EMBER_CHECK_T(ValueError, port >= 0 && port < 65536, "[TCPStore] port ", port,
                " is not in 0..65535");
  if (is_master) {
    server_ = std::make_unique<TCPStoreServer>(port);
    port_ = server_->port();
  } else {
    EMBER_CHECK_T(ValueError, port > 0, "[TCPStore] a client needs the server's port, got 0");
  }
  connect();
  add(kJoinedKey, 1);
  if (is_master && wait_for_workers && world_size > 0) {
    const auto deadline = Clock::now() + timeout;
    while (add(kJoinedKey, 0) < world_size) {
      if (Clock::now() >= deadline)
        EMBER_THROW(distributed::DistStoreError, "[TCPStore] timed out after ", timeout.count(),
                    " ms waiting for ", world_size, " processes to join; ", add(kJoinedKey, 0),
                    " did (is WORLD_SIZE right?)");
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

TCPStore::~TCPStore() = default;

void TCPStore::connect() {
  const std::string host = server_ ? std::string("127.0.0.1") : host_;
  connection_ = std::make_unique<Connection>(host, port_, timeout_);
}

namespace {

std::string request_of(uint8_t command) {
  return std::string(1, static_cast<char>(command));
}

}  // namespace

// Sends `request` and reads its answer with `read` before the deadline. On a timeout the
// connection is dropped (its late answer must not be read as the next one's) and the next
// request connects again.
void TCPStore::exchange(const std::string& request, const std::string& what, Milliseconds timeout,
                        const std::function<bool(Connection&, Deadline)>& read) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!connection_) connect();
  connection_->send_all(request);
  if (!read(*connection_, Clock::now() + timeout)) {
    connection_.reset();
    EMBER_THROW(distributed::DistStoreError, "[TCPStore] timed out after ", timeout.count(), " ms ",
                what);
  }
}

namespace {

// Reads a length-prefixed value.
bool read_value(TCPStore::Connection& connection, TCPStore::Deadline deadline, Bytes& value) {
  char size_bytes[8];
  if (!connection.read_exact(size_bytes, 8, deadline)) return false;
  value.resize(decode_u64(size_bytes));
  return value.empty() || connection.read_exact(value.data(), value.size(), deadline);
}

std::string joined(const std::vector<std::string>& keys) {
  std::string names;
  for (const std::string& key : keys) names += (names.empty() ? "" : ", ") + key;
  return names;
}

}  // namespace

void TCPStore::set(const std::string& key, const Bytes& value) {
  std::string request = request_of(kSet);
  put_field(request, key);
  put_field(request, value);
  exchange(request, "setting key '" + key + "'", timeout_, [](Connection& c, Deadline d) {
    char ack = 0;
    return c.read_exact(&ack, 1, d);
  });
}

Bytes TCPStore::get(const std::string& key) {
  std::string request = request_of(kGet);
  put_field(request, key);
  Bytes value;
  exchange(request, "waiting for key '" + key + "'", timeout_,
           [&](Connection& c, Deadline d) { return read_value(c, d, value); });
  return value;
}

void TCPStore::wait(const std::vector<std::string>& keys, const Milliseconds& timeout) {
  std::string request = request_of(kWait);
  put_u64(request, keys.size());
  for (const std::string& key : keys) put_field(request, key);
  exchange(request, "waiting for key(s): " + joined(keys), timeout, [](Connection& c, Deadline d) {
    char ack = 0;
    return c.read_exact(&ack, 1, d);
  });
}

int64_t TCPStore::add(const std::string& key, int64_t delta) {
  std::string request = request_of(kAdd);
  put_field(request, key);
  put_u64(request, static_cast<uint64_t>(delta));
  char answer[9] = {};
  exchange(request, "adding to key '" + key + "'", timeout_,
           [&](Connection& c, Deadline d) { return c.read_exact(answer, 9, d); });
  EMBER_CHECK_T(ValueError, answer[0] == 1, "[TCPStore add] the value of key '", key,
                "' is not an integer (or the counter overflows)");
  return static_cast<int64_t>(decode_u64(answer + 1));
}

bool TCPStore::check(const std::vector<std::string>& keys) {
  std::string request = request_of(kCheck);
  put_u64(request, keys.size());
  for (const std::string& key : keys) put_field(request, key);
  char answer = 0;
  exchange(request, "checking keys", timeout_,
           [&](Connection& c, Deadline d) { return c.read_exact(&answer, 1, d); });
  return answer == 1;
}

bool TCPStore::delete_key(const std::string& key) {
  std::string request = request_of(kDelete);
  put_field(request, key);
  char answer = 0;
  exchange(request, "deleting key '" + key + "'", timeout_,
           [&](Connection& c, Deadline d) { return c.read_exact(&answer, 1, d); });
  return answer == 1;
}

int64_t TCPStore::num_keys() {
  char answer[8] = {};
  exchange(request_of(kNumKeys), "counting keys", timeout_,
           [&](Connection& c, Deadline d) { return c.read_exact(answer, 8, d); });
  return static_cast<int64_t>(decode_u64(answer));
}

Bytes TCPStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  std::string request = request_of(kCompareSet);
  put_field(request, key);
  put_field(request, expected);
  put_field(request, desired);
  Bytes value;
  exchange(request, "in compare_set of key '" + key + "'", timeout_,
           [&](Connection& c, Deadline d) { return read_value(c, d, value); });
  return value;
}

}  // namespace ember::distributed
