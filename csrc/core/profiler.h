// The profiler's event recorder: ranges (ops entered from Python, autograd backward nodes,
// record_function blocks) with their start and end times, thread, nesting, input shapes, Python
// stack and the CPU memory allocated inside them. Python's ember.profiler turns the events into
// PyTorch's tables and Chrome traces.
//
// When no profile is running, every hook costs one relaxed atomic load (enabled()). Ranges nest
// per thread: each thread keeps a stack of open ranges, and an allocation is charged to the
// innermost open range of the thread that makes it. See docs/design/profiler.md.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace ember::profiler {

enum class EventKind : int {
  kOp = 0,        // an op called from Python (the bindings)
  kBackward = 1,  // an autograd node run by the engine
  kUser = 2,      // record_function
};

struct Config {
  bool record_shapes = false;
  bool profile_memory = false;
  bool with_stack = false;
};

struct Event {
  std::string name;
  EventKind kind = EventKind::kOp;
  int64_t id = 0;
  int64_t parent_id = -1;  // -1: no enclosing range on its thread
  uint64_t thread = 0;     // a small per-process number for the recording thread
  int64_t start_ns = 0;    // steady clock
  int64_t end_ns = 0;
  int64_t self_memory = 0;   // bytes allocated minus bytes freed by this range, not its children
  int64_t total_memory = 0;  // the same, children included
  std::vector<std::vector<int64_t>> input_shapes;  // with record_shapes; [] for a non-tensor
  std::vector<std::string> input_dtypes;
  std::vector<std::string> stack;  // with with_stack: "file(line): function", innermost first
};

namespace detail {
extern std::atomic<bool> g_enabled;
extern std::atomic<bool> g_memory;
}  // namespace detail

// Whether a profile is recording (any thread may ask; the answer is one relaxed load).
inline bool enabled() {
  return detail::g_enabled.load(std::memory_order_relaxed);
}
inline bool memory_enabled() {
  return detail::g_memory.load(std::memory_order_relaxed);
}
const Config& config();

// Starts recording (a RuntimeError when a profile is already running: profiles do not nest, as
// in PyTorch). stop() ends it and returns the events of every thread, in completion order.
void start(const Config& config);
std::vector<Event> stop();
int64_t now_ns();

// Opens a range on the calling thread; returns its handle for end_range, or -1 when not
// recording. The event's extra fields (shapes, stack) may be filled through open_event()
// between the two calls.
int64_t begin_range(std::string name, EventKind kind);
void end_range(int64_t handle);
// Drops a range that turned out not to be one (a pybind11 overload whose arguments did not fit).
void cancel_range(int64_t handle);
// The innermost open range of the calling thread (nullptr when none): for filling details.
Event* open_event();

// An allocation (positive) or a free (negative) of CPU memory, charged to the innermost open
// range of the calling thread.
void record_memory(int64_t delta_bytes);

// RAII range for C++ callers (the autograd engine).
class Range {
 public:
  Range(const char* name, EventKind kind) : handle_(enabled() ? begin_range(name, kind) : -1) {}
  Range(std::string name, EventKind kind)
      : handle_(enabled() ? begin_range(std::move(name), kind) : -1) {}
  ~Range() {
    if (handle_ >= 0) end_range(handle_);
  }
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;

 private:
  int64_t handle_;
};

}  // namespace ember::profiler
