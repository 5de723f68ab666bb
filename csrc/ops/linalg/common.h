// Shared pieces of ember.linalg's C++ ops: argument checks with PyTorch's messages, the
// column-major work layout, the loop over a batch of matrices (kernels/linalg/batch.h, shared
// with the kernels), and LinAlgError reporting.
//
// Every factorization works on column-major matrices (LAPACK's layout, and Eigen's default), so
// inputs are copied once into a batch of contiguous column-major matrices
// (column_major_copy) and factor outputs are returned in that layout, as PyTorch returns them
// (e.g. linalg.lu_factor's LU has strides (..., 1, m)).
#pragma once
#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/tensor.h"
#include "kernels/linalg/batch.h"

namespace ember {
namespace native {
namespace linalg {

// Messages read "[linalg.inv] A must be batches of square matrices, ...": `op` is the
// PyTorch name (linalg.inv, linalg.cholesky_ex, cholesky_solve, ...); `arg` names the argument.
void check_float_or_complex(const Tensor& A, const char* op, const char* arg = "A");
void check_at_least_2d(const Tensor& A, const char* op, const char* arg = "A");
void check_square(const Tensor& A, const char* op, const char* arg = "A");
// The checks most ops start with: >= 2 dims, square, float32/64 or complex64/128.
void check_square_float_matrix(const Tensor& A, const char* op, const char* arg = "A");
void check_same_dtype(const Tensor& A, const Tensor& B, const char* op, const char* a = "A",
                      const char* b = "B");

// batch_count, rows, cols and for_each_matrix are in kernels/linalg/batch.h (the kernels use
// them too).

// Strides of a batch of contiguous column-major matrices of the given sizes (..., m, n):
// (..., 1, m), batch strides m * n (at least 1 per dim, as contiguous_strides does).
DimVector column_major_strides(IntArrayRef sizes);
Tensor empty_column_major(IntArrayRef sizes, ScalarType dtype, const char* op);
// A new column-major batch holding A's values (any strides, converted to `dtype`).
Tensor column_major_copy(const Tensor& A, ScalarType dtype, const char* op);
inline Tensor column_major_copy(const Tensor& A, const char* op) {
  return column_major_copy(A, A.dtype(), op);
}
bool is_column_major_batch(const Tensor& A);

// "(Batch element 3): " for a batched input (A.dim() > 2), "" otherwise: PyTorch's prefix of
// per-matrix errors.
std::string batch_prefix(const Tensor& A, int64_t b);

// Throws LinAlgError "[op] (Batch element b): <describe(info)>" for the first batch element
// whose info (an int32 tensor of batch_count(A) entries, LAPACK's convention: 0 = success) is
// not zero. The _ex variants return the infos instead of calling this.
template <typename Describe>
void raise_for_infos(const Tensor& infos, const Tensor& A, const char* op, Describe describe) {
  const int32_t* info = infos.data<int32_t>();
  const int64_t n = infos.numel();
  for (int64_t b = 0; b < n; ++b) {
    if (info[b] != 0) {
      throw LinAlgError(str_cat("[", op, "] ", batch_prefix(A, b), describe(info[b])));
    }
  }
}

}  // namespace linalg
}  // namespace native
}  // namespace ember
