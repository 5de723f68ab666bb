// linalg.det and linalg.slogdet: the product of the LU factorization's pivots, signed by the
// parity of its row interchanges. (logdet is a composite of public ops, in api/linalg/solve.cpp.)
#include "ops/creation.h"
#include "ops/linalg/common.h"
#include "ops/linalg/solve.h"
#include "ops/shape_util.h"

namespace ember {
namespace native {
namespace linalg {

std::tuple<Tensor, LuFactors> det_with_factors(const Tensor& A) {
  LuFactors f = lu_factor_square(A, "linalg.det");
  Tensor det = empty_tensor(batch_shape(A), A.dtype(), Device(), "linalg.det");
  lu_det_stub(A.device(), f.LU, f.pivots, det);
  return {det, f};
}

std::tuple<Tensor, Tensor, LuFactors> slogdet_with_factors(const Tensor& A) {
  LuFactors f = lu_factor_square(A, "linalg.slogdet");
  const DimVector batch = batch_shape(A);
  Tensor sign = empty_tensor(batch, A.dtype(), Device(), "linalg.slogdet");
  Tensor logabsdet = empty_tensor(batch, to_real(A.dtype()), Device(), "linalg.slogdet");
  lu_slogdet_stub(A.device(), f.LU, f.pivots, sign, logabsdet);
  return {sign, logabsdet, f};
}

}  // namespace linalg

using namespace linalg;

Tensor linalg_det(const Tensor& A, const Tensor& out) {
  const char* op = "linalg.det";
  check_square_float_matrix(A, op);
  check_out(out, A.dtype(), op);
  return finish_out(std::get<0>(det_with_factors(A)), out, op);
}

TensorPair linalg_slogdet(const Tensor& A, const Tensor& sign_out, const Tensor& logabsdet_out) {
  const char* op = "linalg.slogdet";
  check_square_float_matrix(A, op);
  check_out(sign_out, A.dtype(), op);
  check_out(logabsdet_out, to_real(A.dtype()), op);
  auto [sign, logabsdet, factors] = slogdet_with_factors(A);
  (void)factors;
  return {finish_out(sign, sign_out, op), finish_out(logabsdet, logabsdet_out, op)};
}

}  // namespace native
}  // namespace ember
