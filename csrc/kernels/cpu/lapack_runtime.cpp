// OpenBLAS set up for Ember at load: its threads run on Ember's OpenMP pool (Note [LAPACK
// threads]) and its argument-error reports (xerbla) are silenced (Note [LAPACK errors]).
//
// Note [LAPACK threads]
// OpenBLAS (pthreads build, as the PyPI wheel ships it) parallelises its BLAS calls on a pool of
// its own. Two pools spinning on the same cores is what Ember's one-pool rule (docs/design/
// architecture.md, "Threads") forbids, so OpenBLAS is handed a threads callback
// (openblas_set_threads_callback_function): whenever it splits work into jobs, the callback runs
// them as one OpenMP team, on the threads Ember's parallel_for uses, and OpenBLAS's own workers
// stay asleep.
//
// The jobs of one split may wait on each other (OpenBLAS's level-3 driver shares packed panels
// between them), so they must all run at once: a team smaller than the job count would deadlock.
// OpenBLAS splits work into as many jobs as its thread count, a process-wide setting, so:
//   - the count is 1 by default: calls from inside a parallel region (the batch loops) never
//     split, and neither do concurrent calls;
//   - one large matrix (batch of one) raises it to Ember's thread count for the duration of its
//     op, on the calling thread outside any parallel region, where an OpenMP team of that size is
//     available. It does so only while holding g_lapack_mutex exclusively; every other LAPACK
//     user holds it shared, so no call can see the raised count from inside a parallel region.
//     When the exclusive lock is not free at once (another op is running LAPACK), the large
//     matrix runs on one thread instead of waiting.
//
// Note [LAPACK errors]
// LAPACK reports an illegal argument by calling xerbla, which prints to stderr. Ember validates
// every argument it passes, so the only reports left come from routines called deep inside a
// decomposition of non-finite input (e.g. ?lascl inside ?gesdd on a matrix holding inf, where
// the result is NaN, as in PyTorch). The kernels report failures through `info` and the ops turn
// them into LinAlgError, so the handler stays silent instead of printing.
#include <omp.h>

#include <limits>
#include <shared_mutex>

#include "core/parallel.h"
#include "kernels/cpu/lapack.h"

extern "C" {
using openblas_dojob_callback = void (*)(int thread_num, void* jobdata, int dojob_data);
using openblas_threads_callback = void (*)(int sync, openblas_dojob_callback dojob, int numjobs,
                                           size_t jobdata_elsize, void* jobdata, int dojob_data);
void scipy_openblas_set_threads_callback_function(openblas_threads_callback callback);
void scipy_openblas_set_num_threads(int num_threads);
int scipy_openblas_get_num_threads();
using openblas_xerbla_handler = void (*)(const char* name, const int* info, size_t name_length);
openblas_xerbla_handler scipy_openblas_set_xerbla(openblas_xerbla_handler handler);
}

namespace ember {
namespace native {
namespace lapack {

namespace {

std::shared_mutex g_lapack_mutex;
// Scopes this thread holds: a nested scope (an op calling another inside its own) takes no
// second lock, which could wait forever on the exclusive lock this very thread holds.
thread_local int t_scope_depth = 0;

// Runs OpenBLAS's jobs as one OpenMP team (every job on its own thread, all at once).
void run_jobs_on_openmp(int /*sync*/, openblas_dojob_callback dojob, int numjobs,
                        size_t jobdata_elsize, void* jobdata, int dojob_data) {
  char* data = static_cast<char*>(jobdata);
  if (numjobs <= 1) {
    if (numjobs == 1) dojob(0, data, dojob_data);
    return;
  }
#pragma omp parallel num_threads(numjobs)
  {
    const int t = omp_get_thread_num();
    const int nt = omp_get_num_threads();
    for (int i = t; i < numjobs; i += nt) dojob(i, data + i * jobdata_elsize, dojob_data);
  }
}

void silent_xerbla(const char*, const int*, size_t) {}

// Installed before any LAPACK call can run (static initialisation of libember).
const bool g_installed = [] {
  scipy_openblas_set_xerbla(&silent_xerbla);
  scipy_openblas_set_threads_callback_function(&run_jobs_on_openmp);
  scipy_openblas_set_num_threads(1);
  return true;
}();

}  // namespace

int to_int(int64_t v, const char* op) {
  EMBER_CHECK(v <= std::numeric_limits<int>::max(), "[", op, "] a dimension of ", v,
              " exceeds what LAPACK's 32-bit integers can index");
  return static_cast<int>(v);
}

ThreadScope::ThreadScope(bool parallel_inside) {
  if (t_scope_depth++ > 0) {
    nested_ = true;
    return;
  }
  const int n = std::min(get_num_threads(), omp_get_thread_limit());
  if (parallel_inside && n > 1 && !in_parallel_region() && g_lapack_mutex.try_lock()) {
    exclusive_ = true;
    scipy_openblas_set_num_threads(n);
    return;
  }
  g_lapack_mutex.lock_shared();
  // Defensive: the count is 1 whenever no exclusive scope is held, unless code outside Ember
  // set it (e.g. a thread-control tool that found this library); restore the invariant.
  if (scipy_openblas_get_num_threads() != 1) scipy_openblas_set_num_threads(1);
}

ThreadScope::ThreadScope(TryOnly) {
  if (t_scope_depth > 0) {
    // Nested in a scope of this thread. With OpenBLAS raised to several threads (an exclusive
    // scope), a call from inside a parallel region would split into jobs that can never all run.
    held_ = !(in_parallel_region() && scipy_openblas_get_num_threads() > 1);
    if (held_) {
      ++t_scope_depth;
      nested_ = true;
    }
    return;
  }
  held_ = g_lapack_mutex.try_lock_shared();
  if (!held_) return;  // an exclusive scope is running on another thread
  ++t_scope_depth;
  if (scipy_openblas_get_num_threads() != 1) scipy_openblas_set_num_threads(1);
}

int ThreadScope::threads() const {
  return scipy_openblas_get_num_threads();
}

ThreadScope::~ThreadScope() {
  if (!held_) return;
  --t_scope_depth;
  if (nested_) return;
  if (exclusive_) {
    scipy_openblas_set_num_threads(1);
    g_lapack_mutex.unlock();
  } else {
    g_lapack_mutex.unlock_shared();
  }
}

}  // namespace lapack
}  // namespace native
}  // namespace ember
