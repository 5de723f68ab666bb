#include "core/parallel.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <mutex>

#include "core/error.h"
#include "core/float_mode.h"

namespace ember {

namespace {
std::atomic<int> g_num_threads{0};  // 0: not yet read from OpenMP

int default_threads() {
  int n = g_num_threads.load();
  if (n == 0) {
    n = std::max(1, omp_get_max_threads());
    g_num_threads.store(n);
  }
  return n;
}
}  // namespace

int get_num_threads() {
  return default_threads();
}

void set_num_threads(int n) {
  EMBER_CHECK(n > 0, "[set_num_threads] Expected a positive number of threads, got ", n);
  g_num_threads.store(n);
  omp_set_num_threads(n);
}

bool in_parallel_region() {
  return omp_in_parallel();
}

int sync_library_threads() {
  const int n = get_num_threads();
  if (!omp_in_parallel() && omp_get_max_threads() != n) omp_set_num_threads(n);
  return omp_get_max_threads();
}

namespace detail {
void parallel_run(int64_t begin, int64_t end, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& f) {
  const int64_t range = end - begin;
  const int64_t max_chunks = (range + grain - 1) / grain;
  const int nthreads = static_cast<int>(std::min<int64_t>(get_num_threads(), max_chunks));
  std::exception_ptr error;
  std::once_flag error_once;
#pragma omp parallel num_threads(nthreads)
  {
    apply_flush_denormal();  // threads the pool added since set_flush_denormal
    const int tid = omp_get_thread_num();
    const int nt = omp_get_num_threads();
    const int64_t chunk = (range + nt - 1) / nt;
    const int64_t b = begin + tid * chunk;
    const int64_t e = std::min(end, b + chunk);
    if (b < e) {
      try {
        f(b, e);
      } catch (...) {
        std::call_once(error_once, [&] { error = std::current_exception(); });
      }
    }
  }
  if (error) std::rethrow_exception(error);
}
}  // namespace detail

}  // namespace ember
