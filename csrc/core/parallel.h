// One thread pool for everything: OpenMP, shared with oneDNN (both use libgomp), so that
// set_num_threads governs all of Ember's parallelism and no second pool spins against it.
#pragma once
#include <cstdint>
#include <exception>
#include <functional>

namespace ember {

// Work below this many elements (per op) runs on the calling thread.
constexpr int64_t kGrainSize = 32768;

int get_num_threads();
void set_num_threads(int n);  // n >= 1; RuntimeError otherwise
bool in_parallel_region();
// For calls into a library that sizes its own OpenMP teams (oneDNN): makes the calling thread's
// OpenMP default match set_num_threads (OpenMP keeps that default per thread, so a Python thread
// other than the one that called set_num_threads would otherwise run oneDNN on OpenMP's initial
// count) and returns the count the library will use. Caches of oneDNN primitives must key on it:
// a primitive is partitioned for the thread count it was created with.
int sync_library_threads();

// Runs f(chunk_begin, chunk_end) over [begin, end) in contiguous chunks of at least `grain`
// elements. Exceptions thrown by f are rethrown on the calling thread (the first one wins).
template <typename F>
void parallel_for(int64_t begin, int64_t end, int64_t grain, const F& f);

namespace detail {
void parallel_run(int64_t begin, int64_t end, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& f);
}

template <typename F>
void parallel_for(int64_t begin, int64_t end, int64_t grain, const F& f) {
  if (end <= begin) return;
  if (end - begin <= grain || get_num_threads() == 1 || in_parallel_region()) {
    f(begin, end);
    return;
  }
  detail::parallel_run(begin, end, grain, std::function<void(int64_t, int64_t)>(f));
}

}  // namespace ember
