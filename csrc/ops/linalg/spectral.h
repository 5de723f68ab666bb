// ember.linalg's spectral family: eigh / eigvalsh, eig / eigvals, svd / svdvals, qr,
// householder_product, lstsq, and the functions built on them (matrix_norm, norm, cond,
// matrix_rank, pinv). Inputs are float32/64 or complex64/128 batches of matrices (..., m, n);
// factors come back as batches of column-major matrices, as PyTorch returns them.
//
// Each op checks its arguments with PyTorch's messages, copies A into the column-major work
// layout (ops/linalg/common.h), runs its LAPACK kernel (kernels/cpu/linalg/<name>.cpp) over the
// batch and raises LinAlgError naming the failing batch element. The api layer
// (api/linalg/spectral.h) records the differentiable ones, running the same checks (check_*)
// first; pinv, matrix_norm, norm, cond, torch.svd, torch.qr and torch.pinverse are composites
// of public ops there.
#pragma once
#include <optional>
#include <string>
#include <tuple>

#include "core/scalar.h"
#include "core/tensor.h"
#include "dispatch/stub.h"
#include "kernels/linalg/spectral_stubs.h"

namespace ember {
namespace native {
namespace linalg {

// ---- eigh / eigvalsh (uplo: "L" or "U") ---------------------------------------------------
std::tuple<Tensor, Tensor> eigh(const Tensor& A, const std::string& uplo = "L",
                                const Tensor& values_out = {}, const Tensor& vectors_out = {});
Tensor eigvalsh(const Tensor& A, const std::string& uplo = "L", const Tensor& out = {});
// The argument checks of eigh / eigvalsh; returns whether uplo names the upper triangle.
bool check_eigh_args(const Tensor& A, const std::string& uplo, const char* op);
// The computation without checks or recording (vectors undefined unless asked for).
std::tuple<Tensor, Tensor> eigh_unrecorded(const Tensor& A, bool upper, bool vectors,
                                           const char* op);

// ---- eig / eigvals: complex eigenvalues and unit-norm eigenvectors of general matrices ------
std::tuple<Tensor, Tensor> eig(const Tensor& A, const Tensor& values_out = {},
                               const Tensor& vectors_out = {});
Tensor eigvals(const Tensor& A, const Tensor& out = {});
// The argument checks of eig / eigvals (eigvals: no out tensors).
void check_eig_args(const Tensor& A, const Tensor& values_out, const Tensor& vectors_out,
                    const char* op);
std::tuple<Tensor, Tensor> eig_unrecorded(const Tensor& A, bool vectors, const char* op);

// ---- svd / svdvals ------------------------------------------------------------------------
// driver must be empty: PyTorch accepts it only for CUDA inputs.
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices = true,
                                       const std::optional<std::string>& driver = std::nullopt,
                                       const Tensor& U_out = {}, const Tensor& S_out = {},
                                       const Tensor& Vh_out = {});
Tensor svdvals(const Tensor& A, const std::optional<std::string>& driver = std::nullopt,
               const Tensor& out = {});
void check_svd_args(const Tensor& A, const std::optional<std::string>& driver, const char* op);
// The computation without checks or recording; U and Vh undefined unless compute_uv.
std::tuple<Tensor, Tensor, Tensor> svd_unrecorded(const Tensor& A, bool full_matrices,
                                                  bool compute_uv, const char* op);

// ---- qr (mode: "reduced", "complete" or "r") and householder_product -----------------------
std::tuple<Tensor, Tensor> qr(const Tensor& A, const std::string& mode = "reduced",
                              const Tensor& Q_out = {}, const Tensor& R_out = {});
std::tuple<Tensor, Tensor> qr_unrecorded(const Tensor& A, const std::string& mode, const char* op);
void check_qr_args(const Tensor& A, const std::string& mode);
// geqrf's (compact QR, tau) without checks or recording.
// R_rows > 0 also extracts R (R_rows x n, column-major) as the third result.
std::tuple<Tensor, Tensor, Tensor> compact_qr(const Tensor& A, const char* op, int64_t R_rows = 0);
// The product of the Householder reflectors H_1 ... H_k (k = tau.size(-1)) stored below the
// diagonal of A's first k columns (LAPACK's orgqr / ungqr): the first n columns of Q.
Tensor householder_product(const Tensor& A, const Tensor& tau, const Tensor& out = {});
Tensor householder_product_unrecorded(const Tensor& A, const Tensor& tau);
void check_householder_product_args(const Tensor& A, const Tensor& tau);
// torch.geqrf's argument checks.
void check_geqrf_args(const Tensor& A);

// ---- lstsq ----------------------------------------------------------------------------------
// (solution, residuals, rank, singular_values) as PyTorch returns them per driver ("gels",
// "gelsy" (default), "gelsd", "gelss"); rcond defaults to eps(dtype) * max(m, n).
using LstsqResult = std::tuple<Tensor, Tensor, Tensor, Tensor>;
LstsqResult lstsq(const Tensor& A, const Tensor& B, std::optional<double> rcond = std::nullopt,
                  const std::optional<std::string>& driver = std::nullopt);
LstsqResult lstsq_unrecorded(const Tensor& A, const Tensor& B, std::optional<double> rcond,
                             const std::string& driver);
// B is a batch of vectors (A.dim() == B.dim() + 1), PyTorch's vector case of lstsq.
bool lstsq_vector_case(const Tensor& A, const Tensor& B);
// lstsq's argument checks; returns the driver's name (gelsy when unset).
std::string check_lstsq_args(const Tensor& A, const Tensor& B,
                             const std::optional<std::string>& driver);

// ---- matrix_rank (an integer result) and the tolerances it shares with pinv -----------------
// atol / rtol: tensors broadcasting against the batch (undefined: PyTorch's defaults, rtol =
// eps * max(m, n) unless atol > 0).
Tensor matrix_rank(const Tensor& A, const Tensor& atol = {}, const Tensor& rtol = {},
                   bool hermitian = false, const Tensor& out = {});
// PyTorch's get_atol_rtol: float64 (atol, rtol), rtol 0 where atol > 0 when only atol is given;
// complex tolerances are refused.
std::pair<Tensor, Tensor> rank_tolerances(const Tensor& A, const Tensor& atol, const Tensor& rtol,
                                          const char* op);
// max(atol, rtol * largest): the threshold under which a singular value counts as zero.
Tensor rank_threshold(const Tensor& atol, const Tensor& rtol, const Tensor& largest);

// ord of matrix_norm / norm / cond (api/linalg/spectral.h): a number (+-1, +-2, +-inf) or "fro" /
// "nuc" (exactly one of ord / ord_str is used).
struct NormOrd {
  std::optional<double> number;
  std::optional<std::string> name;
};

// ---- matrix_sqrth and polar (ops/linalg/polar.cpp) ----------------------------------------
// The principal square root of Hermitian positive-(semi)definite matrices (lower triangle read,
// negative eigenvalues taken as zero).
Tensor matrix_sqrth(const Tensor& A);
void check_matrix_sqrth_args(const Tensor& A);
// (s, V): the square roots of A's eigenvalues (clamped at zero) and its eigenvectors, so that
// sqrt(A) = V diag(s) V^H; no checks or recording.
std::tuple<Tensor, Tensor> matrix_sqrth_factors(const Tensor& A, const char* op);
Tensor matrix_sqrth_from_factors(const Tensor& s, const Tensor& V);
// The polar decomposition A = U H of (..., m, n) matrices with m >= n.
std::tuple<Tensor, Tensor> polar(const Tensor& A, const Tensor& U_out = {},
                                 const Tensor& H_out = {});
void check_polar_args(const Tensor& A);
// (U, H, S, V) from the reduced svd A = W diag(S) V^H: U = W V^H, H = V diag(S) V^H; no checks
// or recording.
std::tuple<Tensor, Tensor, Tensor, Tensor> polar_factors(const Tensor& A);

}  // namespace linalg

// torch.geqrf: (a, tau), LAPACK's compact QR (not differentiable, as in PyTorch).
std::tuple<Tensor, Tensor> geqrf(const Tensor& A, const Tensor& a_out = {},
                                 const Tensor& tau_out = {});

// The kernel stubs are in kernels/linalg/spectral_stubs.h.

}  // namespace native
}  // namespace ember
