// The profiler's recorder (core/profiler.h): ranges nest per thread, memory is charged to the
// innermost open range and adds up, cancelled ranges vanish, nothing is recorded while off, and
// threads record concurrently.
#include <algorithm>
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "core/factory.h"
#include "core/profiler.h"

using namespace ember;
namespace prof = ember::profiler;

namespace {

const prof::Event& find(const std::vector<prof::Event>& events, const std::string& name) {
  for (const prof::Event& e : events) {
    if (e.name == name) return e;
  }
  FAIL("no event " << name);
  return events.front();
}

}  // namespace

TEST_CASE("profiler ranges nest and record nothing while off", "[profiler]") {
  CHECK(prof::begin_range("off", prof::EventKind::kUser) == -1);
  prof::start({});
  {
    prof::Range outer("outer", prof::EventKind::kUser);
    prof::Range inner("inner", prof::EventKind::kOp);
  }
  const int64_t cancelled = prof::begin_range("cancelled", prof::EventKind::kOp);
  prof::cancel_range(cancelled);
  std::vector<prof::Event> events = prof::stop();
  REQUIRE(events.size() == 2);
  const prof::Event& outer = find(events, "outer");
  const prof::Event& inner = find(events, "inner");
  CHECK(inner.parent_id == outer.id);
  CHECK(outer.parent_id == -1);
  CHECK(outer.start_ns <= inner.start_ns);
  CHECK(inner.end_ns <= outer.end_ns);
  CHECK_FALSE(prof::enabled());
  CHECK_THROWS(([] {
    prof::start({});
    try {
      prof::start({});
    } catch (...) {
      prof::stop();
      throw;
    }
  }()));
}

TEST_CASE("profiler memory is charged to the innermost range and adds up", "[profiler]") {
  prof::Config config;
  config.profile_memory = true;
  prof::start(config);
  {
    prof::Range outer("outer", prof::EventKind::kUser);
    Tensor a = empty_tensor({1000}, ScalarType::Float32, Device(), "test");  // 4000 bytes
    Tensor b;
    {
      prof::Range inner("inner", prof::EventKind::kOp);
      b = empty_tensor({500}, ScalarType::Float64, Device(), "test");        // 4000 bytes
      Tensor c = empty_tensor({10}, ScalarType::Float32, Device(), "test");  // freed inside
    }
  }  // b then a are freed while outer is open
  std::vector<prof::Event> events = prof::stop();
  const prof::Event& outer = find(events, "outer");
  const prof::Event& inner = find(events, "inner");
  // inner: b allocated, c allocated and freed; outer: a allocated, b and a freed.
  CHECK(inner.self_memory == 4000);
  CHECK(inner.total_memory == 4000);
  CHECK(outer.self_memory == 4000 - 4000 - 4000);
  CHECK(outer.total_memory == outer.self_memory + inner.total_memory);
  CHECK(outer.total_memory == 0);
}

TEST_CASE("profiler records threads concurrently", "[profiler]") {
  prof::start({});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < 200; ++i) prof::Range r("op", prof::EventKind::kOp);
    });
  }
  for (auto& t : threads) t.join();
  std::vector<prof::Event> events = prof::stop();
  CHECK(events.size() == 800);
  std::vector<uint64_t> ids;
  for (const prof::Event& e : events) {
    if (std::find(ids.begin(), ids.end(), e.thread) == ids.end()) ids.push_back(e.thread);
    CHECK(e.parent_id == -1);
  }
  CHECK(ids.size() == 4);
}
