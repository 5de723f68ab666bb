#include "ops/linalg/spectral_util.h"

#include "core/dtype.h"
#include "core/error.h"
#include "ops/shape_util.h"

namespace ember {
namespace native {
namespace linalg {

void check_lapack_dtype(const Tensor& A, const char* op, const char* kernel) {
  const ScalarType t = A.dtype();
  const bool ok = t == ScalarType::Float32 || t == ScalarType::Float64 ||
                  t == ScalarType::Complex64 || t == ScalarType::Complex128;
  if (!ok) {
    throw NotImplementedError(
        str_cat("[", op, "] \"", kernel, "\" not implemented for '", torch_type_name(t), "'"));
  }
}

void check_float_or_complex_input(const Tensor& A, const char* op, const char* kernel) {
  if (!is_floating(A.dtype()) && !is_complex(A.dtype())) {
    throw NotImplementedError(
        str_cat("[", op, "] Expected a floating point or complex tensor as input. Got ",
                torch_type_name(A.dtype())));
  }
  check_lapack_dtype(A, op, kernel);
}

DimVector batch_dims_with(const Tensor& A, IntArrayRef tail) {
  DimVector shape;
  for (int64_t d = 0; d + 2 < A.dim(); ++d) shape.push_back(A.size(d));
  for (int64_t s : tail) shape.push_back(s);
  return shape;
}

}  // namespace linalg
}  // namespace native
}  // namespace ember
