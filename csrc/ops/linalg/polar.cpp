// linalg.matrix_sqrth (principal square root of a Hermitian positive-(semi)definite matrix) and
// linalg.polar (A = U H, U with orthonormal columns, H Hermitian positive-semidefinite): both
// from one spectral decomposition, eigh of A and the reduced svd of A, as PyTorch computes
// them on the CPU. Their gradients are not those of the decompositions (which divide by
// differences of eigenvalues and blow up at repeated ones) but solve Sylvester equations that
// stay finite there; the api layer records them (api/linalg/spectral.cpp).
#include "ops/elementwise.h"
#include "ops/linalg/common.h"
#include "ops/linalg/spectral.h"
#include "ops/linalg/spectral_util.h"
#include "ops/matmul.h"
#include "ops/shape_util.h"
#include "ops/unary.h"
#include "ops/views.h"

namespace ember {
namespace native {
namespace linalg {

std::tuple<Tensor, Tensor> matrix_sqrth_factors(const Tensor& A, const char* op) {
  auto [w, V] = eigh_unrecorded(A, /*upper=*/false, /*vectors=*/true, op);
  // Negative eigenvalues (a semidefinite input perturbed by rounding) count as zero, as
  // PyTorch; clamp_min keeps NaN, so a non-finite input gives a NaN root.
  return {native::sqrt(clamp_min(w, Scalar(0.0))), V};
}

Tensor matrix_sqrth_from_factors(const Tensor& s, const Tensor& V) {
  return matmul(mul(V, unsqueeze(s, -2)), mH(V));
}

void check_matrix_sqrth_args(const Tensor& A) {
  constexpr const char* op = "linalg.matrix_sqrth";
  check_at_least_2d(A, op);
  check_float_or_complex(A, op);
  check_square(A, op);
}

Tensor matrix_sqrth(const Tensor& A) {
  constexpr const char* op = "linalg.matrix_sqrth";
  check_matrix_sqrth_args(A);
  auto [s, V] = matrix_sqrth_factors(A, op);
  return matrix_sqrth_from_factors(s, V);
}

std::tuple<Tensor, Tensor, Tensor, Tensor> polar_factors(const Tensor& A) {
  auto [W, S, Vh] = svd_unrecorded(A, /*full_matrices=*/false, /*compute_uv=*/true, "linalg.svd");
  Tensor U = matmul(W, Vh);
  Tensor H = matmul(mul(mH(Vh), unsqueeze(S, -2)), Vh);
  return {U, H, S, mH(Vh)};
}

void check_polar_args(const Tensor& A) {
  constexpr const char* op = "linalg.polar";
  check_at_least_2d(A, op);
  check_float_or_complex_input(A, op, "linalg_svd_cpu");
  EMBER_CHECK(rows(A) >= cols(A), "[", op,
              "] input must have at least as many rows as columns, but got ", rows(A), " by ",
              cols(A), " matrices");
}

std::tuple<Tensor, Tensor> polar(const Tensor& A, const Tensor& U_out, const Tensor& H_out) {
  constexpr const char* op = "linalg.polar";
  check_polar_args(A);
  auto [U, H, S, V] = polar_factors(A);
  return {finish_out(U, U_out, op), finish_out(H, H_out, op)};
}

}  // namespace linalg
}  // namespace native
}  // namespace ember
