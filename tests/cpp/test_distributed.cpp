// ember.distributed's C++ core (csrc/distributed): the stores (HashStore, PrefixStore, FileStore,
// TCPStore) across threads, their timeouts and corrupt store files, and a Gloo process group of
// two ranks on threads of this process: collectives, argument checks that raise instead of
// aborting, and send/recv with mismatched sizes.
#ifdef EMBER_HAVE_GLOO
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "core/factory.h"
#include "distributed/process_group.h"
#include "distributed/store.h"

using namespace ember;
using namespace ember::distributed;
using namespace std::chrono_literals;

namespace {

Bytes bytes(const std::string& s) {
  return Bytes(s.begin(), s.end());
}

void exercise(Store& store) {
  store.set("a", bytes("1"));
  REQUIRE(store.get("a") == bytes("1"));
  REQUIRE(store.add("n", 5) == 5);
  REQUIRE(store.add("n", -7) == -2);
  REQUIRE(store.get("n") == bytes("-2"));
  REQUIRE(store.check({"a", "n"}));
  REQUIRE_FALSE(store.check({"a", "missing"}));
  REQUIRE(store.compare_set("a", bytes("1"), bytes("2")) == bytes("2"));
  REQUIRE(store.compare_set("a", bytes("1"), bytes("3")) == bytes("2"));
  REQUIRE(store.delete_key("a"));
  REQUIRE_FALSE(store.delete_key("a"));
  REQUIRE_THROWS_AS(store.wait({"missing"}, 50ms), DistStoreError);
  store.set("text", bytes("x"));
  REQUIRE_THROWS_AS(store.add("text", 1), ValueError);
}

Tensor filled(int64_t n, float value) {
  Tensor t = empty_tensor({n}, ScalarType::Float32, Device(), "test");
  for (int64_t i = 0; i < n; ++i) static_cast<float*>(t.data_ptr())[i] = value;
  return t;
}

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() /
          (std::string("ember_test_") + name + "_" + std::to_string(::getpid())))
      .string();
}

}  // namespace

TEST_CASE("stores: the same operations on every kind", "[distributed]") {
  HashStore hash(5s);
  exercise(hash);
  PrefixStore prefix("p", std::make_shared<HashStore>(5s));
  exercise(prefix);
  const std::string path = temp_path("filestore");
  std::filesystem::remove(path);
  {
    FileStore file(path, -1, 5s);
    exercise(file);
  }
  std::filesystem::remove(path);
  TCPStore tcp("127.0.0.1", 0, true, 5s, false, 1);
  exercise(tcp);
}

TEST_CASE("stores: a get waits for a set from another thread", "[distributed]") {
  TCPStore master("127.0.0.1", 0, true, 5s, false, 2);
  auto later = std::async(std::launch::async, [&] {
    TCPStore client("127.0.0.1", master.port(), false, 5s, false, 2);
    std::this_thread::sleep_for(50ms);
    client.set("k", bytes("v"));
  });
  REQUIRE(master.get("k") == bytes("v"));
  later.get();
}

TEST_CASE("stores: a corrupt store file is an error, a cut record is dropped", "[distributed]") {
  const std::string path = temp_path("corrupt");
  {
    std::ofstream out(path, std::ios::binary);
    out << "Zgarbage garbage garbage";
  }
  REQUIRE_THROWS_AS(FileStore(path, -1, 1s), DistStoreError);
  std::filesystem::remove(path);
  {
    FileStore store(path, -1, 1s);
    store.set("k", bytes("value"));
  }
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 2);
  FileStore store(path, -1, 1s);
  REQUIRE_FALSE(store.check({"k"}));
  store.set("k", bytes("again"));
  REQUIRE(store.get("k") == bytes("again"));
  std::filesystem::remove(path);
}

TEST_CASE("process group: two ranks on threads", "[distributed]") {
  auto store = std::make_shared<HashStore>(20s);
  std::vector<std::future<std::string>> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    ranks.push_back(std::async(std::launch::async, [store, rank]() -> std::string {
      ProcessGroupGloo group(std::make_shared<PrefixStore>("pg", store), rank, 2, 20s, "127.0.0.1",
                             "");
      Tensor t = filled(4, static_cast<float>(rank + 1));
      group.allreduce(t, ReduceOp::kSum)->wait(20s);
      for (int i = 0; i < 4; ++i)
        if (static_cast<float*>(t.data_ptr())[i] != 3.0f) return "all_reduce";
      Tensor mismatched = filled(rank == 0 ? 3 : 5, 1.0f);
      bool raised = false;
      try {
        group.allreduce(mismatched, ReduceOp::kSum)->wait(20s);
      } catch (const DistBackendError&) {
        raised = true;
      }
      if (!raised) return "no argument check";
      Tensor sized = filled(rank == 0 ? 8 : 4, 2.0f);
      raised = false;
      try {
        auto work = rank == 0 ? group.send(sized, 1, 7) : group.recv(sized, 0, 7);
        work->wait(20s);
      } catch (const DistBackendError&) {
        raised = true;
      }
      if (rank == 1 && !raised) return "recv size check";
      group.barrier()->wait(20s);
      return "";
    }));
  }
  for (auto& r : ranks) REQUIRE(r.get() == "");
}
#endif
