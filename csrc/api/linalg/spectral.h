// Public ops of ember.linalg's spectral family (ops/linalg/spectral.h): the decompositions record
// their node here (api/linalg/spectral.cpp) and run the native op once; pinv, matrix_norm, norm,
// cond (api/linalg/norms.cpp), torch.svd, torch.qr and torch.pinverse are composites of public
// ops. matrix_rank (an integer result) runs the native op (after autocast's float32 cast); the
// *_unrecorded / *_factors helpers are native.
#pragma once
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ops/linalg/spectral.h"

namespace ember {

namespace linalg {
// ---- eigh / eigvalsh (uplo: "L" or "U") ---------------------------------------------------
std::tuple<Tensor, Tensor> eigh(const Tensor& A, const std::string& uplo = "L",
                                const Tensor& values_out = {}, const Tensor& vectors_out = {});
Tensor eigvalsh(const Tensor& A, const std::string& uplo = "L", const Tensor& out = {});
using native::linalg::eigh_unrecorded;

// ---- eig / eigvals: complex eigenvalues and unit-norm eigenvectors of general matrices ------
std::tuple<Tensor, Tensor> eig(const Tensor& A, const Tensor& values_out = {},
                               const Tensor& vectors_out = {});
Tensor eigvals(const Tensor& A, const Tensor& out = {});
using native::linalg::eig_unrecorded;

// ---- svd / svdvals ------------------------------------------------------------------------
// driver must be empty: PyTorch accepts it only for CUDA inputs.
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices = true,
                                       const std::optional<std::string>& driver = std::nullopt,
                                       const Tensor& U_out = {}, const Tensor& S_out = {},
                                       const Tensor& Vh_out = {});
Tensor svdvals(const Tensor& A, const std::optional<std::string>& driver = std::nullopt,
               const Tensor& out = {});
using native::linalg::svd_unrecorded;

// ---- qr (mode: "reduced", "complete" or "r") and householder_product -----------------------
std::tuple<Tensor, Tensor> qr(const Tensor& A, const std::string& mode = "reduced",
                              const Tensor& Q_out = {}, const Tensor& R_out = {});
using native::linalg::compact_qr;
using native::linalg::qr_unrecorded;
// The product of the Householder reflectors H_1 ... H_k (k = tau.size(-1)) stored below the
// diagonal of A's first k columns (LAPACK's orgqr / ungqr): the first n columns of Q.
Tensor householder_product(const Tensor& A, const Tensor& tau, const Tensor& out = {});
using native::linalg::householder_product_unrecorded;

// ---- lstsq ----------------------------------------------------------------------------------
// (solution, residuals, rank, singular_values) as PyTorch returns them per driver ("gels",
// "gelsy" (default), "gelsd", "gelss"); rcond defaults to eps(dtype) * max(m, n).
using native::linalg::LstsqResult;
LstsqResult lstsq(const Tensor& A, const Tensor& B, std::optional<double> rcond = std::nullopt,
                  const std::optional<std::string>& driver = std::nullopt);
using native::linalg::lstsq_unrecorded;
using native::linalg::lstsq_vector_case;

// ---- pinv, matrix_rank, matrix_norm, norm, cond (composites of the decompositions) ---------
// atol / rtol: tensors broadcasting against the batch (undefined: PyTorch's defaults, rtol =
// eps * max(m, n) unless atol > 0).
Tensor pinv(const Tensor& A, const Tensor& atol = {}, const Tensor& rtol = {},
            bool hermitian = false, const Tensor& out = {});
// linalg.matrix_rank: the native op (an int64 result), behind autocast's float32 policy.
Tensor matrix_rank(const Tensor& A, const Tensor& atol = {}, const Tensor& rtol = {},
                   bool hermitian = false, const Tensor& out = {});
// ord: a number (+-1, +-2, +-inf) or "fro" / "nuc" (exactly one of ord / ord_str is used).
using native::linalg::NormOrd;
Tensor matrix_norm(const Tensor& A, const NormOrd& ord, IntArrayRef dim = {-2, -1},
                   bool keepdim = false, ScalarType dtype = ScalarType::Undefined,
                   const Tensor& out = {});
// linalg.norm: ord unset (neither field) means the 2-norm / Frobenius norm.
Tensor norm(const Tensor& A, const NormOrd& ord, const std::optional<std::vector<int64_t>>& dim,
            bool keepdim = false, ScalarType dtype = ScalarType::Undefined, const Tensor& out = {});
// ord unset: 2.
Tensor cond(const Tensor& A, const NormOrd& ord, const Tensor& out = {});

// ---- matrix_sqrth and polar ---------------------------------------------------------------
// The principal square root of Hermitian positive-(semi)definite matrices (lower triangle read,
// negative eigenvalues taken as zero).
Tensor matrix_sqrth(const Tensor& A);
using native::linalg::matrix_sqrth_factors;
using native::linalg::matrix_sqrth_from_factors;
// The polar decomposition A = U H of (..., m, n) matrices with m >= n.
std::tuple<Tensor, Tensor> polar(const Tensor& A, const Tensor& U_out = {},
                                 const Tensor& H_out = {});
using native::linalg::polar_factors;
}  // namespace linalg

// torch.pinverse(input, rcond=1e-15).
Tensor pinverse(const Tensor& A, double rcond = 1e-15);
// torch.geqrf: (a, tau), LAPACK's compact QR (not differentiable, as in PyTorch: its node raises).
std::tuple<Tensor, Tensor> geqrf(const Tensor& A, const Tensor& a_out = {},
                                 const Tensor& tau_out = {});
// torch.qr (the old API): mode "reduced" when some, else "complete".
std::tuple<Tensor, Tensor> qr(const Tensor& A, bool some = true, const Tensor& Q_out = {},
                              const Tensor& R_out = {});
// torch.svd (the old API): (U, S, V) with V = Vh^H; some=False gives square U and V;
// compute_uv=False gives zero U (m x m) and V (n x n), as PyTorch.
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool some = true, bool compute_uv = true,
                                       const Tensor& U_out = {}, const Tensor& S_out = {},
                                       const Tensor& V_out = {});

using native::EigFn;
using native::EighFn;
using native::GeqrfFn;
using native::LstsqDriver;
using native::LstsqFn;
using native::OrgqrFn;
using native::QrSmallFn;
using native::SvdFn;

}  // namespace ember
