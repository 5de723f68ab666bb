#include "core/profiler.h"

#include <chrono>
#include <mutex>

#include "core/error.h"

namespace ember::profiler {

namespace detail {
std::atomic<bool> g_enabled{false};
std::atomic<bool> g_memory{false};
}  // namespace detail

namespace {

struct OpenRange {
  Event event;
  int64_t children_memory = 0;
};

// One recording per start(); a thread's open ranges from an earlier recording are dropped the
// first time it records in a new one.
std::mutex g_mutex;
Config g_config;
uint64_t g_generation = 0;  // guarded by g_mutex; read by threads through g_current_generation
std::atomic<uint64_t> g_current_generation{0};
std::atomic<int64_t> g_next_id{0};
std::atomic<uint64_t> g_next_thread{0};
std::vector<Event> g_completed;  // guarded by g_mutex

struct ThreadState {
  uint64_t generation = 0;
  uint64_t number = g_next_thread.fetch_add(1, std::memory_order_relaxed) + 1;
  std::vector<OpenRange> stack;
};

ThreadState& thread_state() {
  thread_local ThreadState state;
  const uint64_t generation = g_current_generation.load(std::memory_order_acquire);
  if (state.generation != generation) {
    state.stack.clear();
    state.generation = generation;
  }
  return state;
}

}  // namespace

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const Config& config() {
  return g_config;
}

void start(const Config& config) {
  std::lock_guard<std::mutex> lock(g_mutex);
  EMBER_CHECK(!detail::g_enabled.load(),
              "[profiler] a profile is already running in this "
              "process; stop it before starting another (profilers do not nest)");
  g_config = config;
  g_completed.clear();
  ++g_generation;
  g_current_generation.store(g_generation, std::memory_order_release);
  detail::g_memory.store(config.profile_memory, std::memory_order_relaxed);
  detail::g_enabled.store(true, std::memory_order_release);
}

std::vector<Event> stop() {
  std::lock_guard<std::mutex> lock(g_mutex);
  detail::g_enabled.store(false, std::memory_order_release);
  detail::g_memory.store(false, std::memory_order_relaxed);
  ++g_generation;  // ranges still open anywhere are dropped, not completed later
  g_current_generation.store(g_generation, std::memory_order_release);
  std::vector<Event> events;
  events.swap(g_completed);
  return events;
}

int64_t begin_range(std::string name, EventKind kind) {
  if (!enabled()) return -1;
  ThreadState& state = thread_state();
  OpenRange range;
  range.event.name = std::move(name);
  range.event.kind = kind;
  range.event.id = g_next_id.fetch_add(1, std::memory_order_relaxed) + 1;
  range.event.parent_id = state.stack.empty() ? -1 : state.stack.back().event.id;
  range.event.thread = state.number;
  range.event.start_ns = now_ns();
  state.stack.push_back(std::move(range));
  return static_cast<int64_t>(state.stack.size()) - 1;
}

void end_range(int64_t handle) {
  if (handle < 0) return;
  const int64_t end = now_ns();
  ThreadState& state = thread_state();
  // A recording that ended (or restarted) since begin_range cleared the stack: nothing to end.
  // Ranges opened inside this one and never ended (an exception skipped their end) end with it.
  while (static_cast<int64_t>(state.stack.size()) > handle) {
    OpenRange range = std::move(state.stack.back());
    state.stack.pop_back();
    range.event.end_ns = end;
    range.event.total_memory = range.event.self_memory + range.children_memory;
    if (!state.stack.empty()) state.stack.back().children_memory += range.event.total_memory;
    std::lock_guard<std::mutex> lock(g_mutex);
    if (state.generation == g_generation) g_completed.push_back(std::move(range.event));
  }
}

void cancel_range(int64_t handle) {
  if (handle < 0) return;
  ThreadState& state = thread_state();
  if (static_cast<int64_t>(state.stack.size()) == handle + 1) state.stack.pop_back();
}

Event* open_event() {
  if (!enabled()) return nullptr;
  ThreadState& state = thread_state();
  return state.stack.empty() ? nullptr : &state.stack.back().event;
}

void record_memory(int64_t delta_bytes) {
  if (!memory_enabled()) return;
  ThreadState& state = thread_state();
  if (!state.stack.empty()) state.stack.back().event.self_memory += delta_bytes;
}

}  // namespace ember::profiler
