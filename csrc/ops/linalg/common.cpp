#include "ops/linalg/common.h"

#include <algorithm>

#include "core/dtype.h"
#include "core/factory.h"
#include "core/shape.h"
#include "dispatch/copy.h"
#include "ops/shape_util.h"

namespace ember {
namespace native {
namespace linalg {

void check_float_or_complex(const Tensor& A, const char* op, const char* arg) {
  const ScalarType t = A.dtype();
  const bool ok = t == ScalarType::Float32 || t == ScalarType::Float64 ||
                  t == ScalarType::Complex64 || t == ScalarType::Complex128;
  if (!ok) {
    // PyTorch raises NotImplementedError for reduced floats as for integers and bool.
    if (is_floating(t)) {
      throw NotImplementedError(
          str_cat("[", op, "] Low precision dtypes not supported. Got ", torch_type_name(t)));
    }
    throw NotImplementedError(str_cat("[", op, "] Expected a floating point or complex tensor as ",
                                      arg == std::string("A") ? "input" : arg, ". Got ",
                                      torch_type_name(t)));
  }
}

void check_at_least_2d(const Tensor& A, const char* op, const char* arg) {
  EMBER_CHECK(A.dim() >= 2, "[", op, "] The input tensor ", arg,
              " must have at least 2 dimensions.");
}

void check_square(const Tensor& A, const char* op, const char* arg) {
  check_at_least_2d(A, op, arg);
  EMBER_CHECK(rows(A) == cols(A), "[", op, "] ", arg,
              " must be batches of square matrices, but they are ", rows(A), " by ", cols(A),
              " matrices");
}

void check_square_float_matrix(const Tensor& A, const char* op, const char* arg) {
  check_square(A, op, arg);
  check_float_or_complex(A, op, arg);
}

void check_same_dtype(const Tensor& A, const Tensor& B, const char* op, const char* a,
                      const char* b) {
  EMBER_CHECK(A.dtype() == B.dtype(), "[", op, "] Expected ", a, " and ", b,
              " to have the same dtype, but got ", a, ".dtype = ", dtype_name(A.dtype()), " and ",
              b, ".dtype = ", dtype_name(B.dtype()));
}

DimVector column_major_strides(IntArrayRef sizes) {
  DimVector strides = contiguous_strides(sizes);
  const int64_t nd = static_cast<int64_t>(sizes.size());
  if (nd >= 2) {
    const int64_t m = sizes[nd - 2];
    strides[nd - 2] = 1;
    strides[nd - 1] = std::max<int64_t>(m, 1);
  }
  return strides;
}

Tensor empty_column_major(IntArrayRef sizes, ScalarType dtype, const char* op) {
  return empty_strided_tensor(sizes, column_major_strides(sizes), dtype, Device(), op);
}

bool is_column_major_batch(const Tensor& A) {
  if (A.dim() < 2) return false;
  const DimVector want = column_major_strides(A.sizes());
  for (int64_t d = 0; d < A.dim(); ++d) {
    if (A.size(d) != 1 && A.strides()[d] != want[d]) return false;
  }
  return true;
}

Tensor column_major_copy(const Tensor& A, ScalarType dtype, const char* op) {
  Tensor out = empty_column_major(A.sizes(), dtype, op);
  copy_into(out, A, op, /*bump_version=*/false);
  return out;
}

std::string batch_prefix(const Tensor& A, int64_t b) {
  return A.dim() > 2 ? str_cat("(Batch element ", b, "): ") : std::string();
}

}  // namespace linalg
}  // namespace native
}  // namespace ember
