// linalg.matrix_exp: checks, the trivial sizes, reduced floats through float32, and the kernel
// (kernels/cpu/linalg/matrix_exp_kernel.cpp) over a contiguous batch.
#include "core/dtype.h"
#include "core/error.h"
#include "ops/creation.h"
#include "ops/linalg/common.h"
#include "ops/linalg/misc.h"
#include "ops/shape_util.h"
#include "ops/unary.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(matrix_exp_stub, MatrixExpFn);

void check_matrix_exp_args(const Tensor& A) {
  const char* op = "linalg.matrix_exp";
  linalg::check_square(A, op);
  EMBER_CHECK_T(NotImplementedError, is_floating(A.dtype()) || is_complex(A.dtype()), "[", op,
                "] Expected a floating point or complex tensor as input. Got ",
                torch_type_name(A.dtype()));
}

Tensor linalg_matrix_exp(const Tensor& A) {
  check_matrix_exp_args(A);
  const int64_t n = linalg::cols(A);
  if (n == 0) return clone(A);
  if (n == 1) return exp(A);
  if (A.dtype() == ScalarType::Float16 || A.dtype() == ScalarType::BFloat16) {
    // The polynomial coefficients and the squarings need float32's range and precision.
    return to_dtype(linalg_matrix_exp(to_dtype(A, ScalarType::Float32)), A.dtype());
  }
  const Tensor a = contiguous(A);
  Tensor result = empty(A.sizes(), A.dtype());
  if (result.numel() > 0) {
    const DimVector batch_shape{linalg::batch_count(A), n, n};
    matrix_exp_stub(A.device(), view(result, batch_shape), view(a, batch_shape));
  }
  return result;
}

}  // namespace native
}  // namespace ember
