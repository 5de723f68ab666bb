// Walking a batch of matrices, shared by ember.linalg's ops (ops/linalg/common.h includes this
// header) and their kernels: the matrix sizes, the batch count and the (parallel) loop over the
// matrices of a batch. The batch dims are all dims but the last two.
#pragma once
#include <algorithm>
#include <cstdint>

#include "core/parallel.h"
#include "core/tensor.h"

namespace ember {
namespace native {
namespace linalg {

// Product of the batch dimensions (all but the last two) and the matrix sizes.
inline int64_t batch_count(const Tensor& A) {
  int64_t n = 1;
  for (int64_t d = 0; d + 2 < A.dim(); ++d) n *= A.size(d);
  return n;
}
inline int64_t rows(const Tensor& A) {
  return A.size(A.dim() - 2);
}
inline int64_t cols(const Tensor& A) {
  return A.size(A.dim() - 1);
}

// Runs fn(b) for every matrix b of a batch, spreading matrices over threads when the batch has
// several (work_per_matrix: about the flops of one, so that tiny matrices are grouped). A batch
// of one runs on the calling thread, where Eigen or LAPACK may parallelise inside.
template <typename F>
void for_each_matrix(int64_t batch, int64_t work_per_matrix, const F& fn) {
  constexpr int64_t kWorkPerTask = 1 << 16;
  const int64_t grain = std::max<int64_t>(1, kWorkPerTask / std::max<int64_t>(1, work_per_matrix));
  parallel_for(0, batch, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t b = lo; b < hi; ++b) fn(b);
  });
}

}  // namespace linalg
}  // namespace native
}  // namespace ember
