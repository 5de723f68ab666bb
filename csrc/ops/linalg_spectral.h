// ember.linalg's spectral family: eigh / eigvalsh, eig / eigvals, svd / svdvals, qr,
// householder_product, lstsq, and the functions built on them (matrix_norm, norm, cond,
// matrix_rank, pinv). Inputs are float32/64 or complex64/128 batches of matrices (..., m, n);
// factors come back as batches of column-major matrices, as PyTorch returns them.
//
// Each op checks its arguments with PyTorch's messages, copies A into the column-major work
// layout (linalg_common.h), runs its LAPACK kernel (kernels/cpu/linalg_<name>.cpp) over the
// batch and raises LinAlgError naming the failing batch element. When autograd records, the op
// calls its derivative wrapper (autograd/derivatives/linalg_spectral.cpp).
#pragma once
#include <optional>
#include <string>
#include <tuple>

#include "core/scalar.h"
#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {
namespace linalg {

// ---- eigh / eigvalsh (uplo: "L" or "U") ---------------------------------------------------
std::tuple<Tensor, Tensor> eigh(const Tensor& A, const std::string& uplo = "L",
                                const Tensor& values_out = {}, const Tensor& vectors_out = {});
Tensor eigvalsh(const Tensor& A, const std::string& uplo = "L", const Tensor& out = {});
// The computation without checks or recording (vectors undefined unless asked for).
std::tuple<Tensor, Tensor> eigh_unrecorded(const Tensor& A, bool upper, bool vectors,
                                           const char* op);

// ---- eig / eigvals: complex eigenvalues and unit-norm eigenvectors of general matrices ------
std::tuple<Tensor, Tensor> eig(const Tensor& A, const Tensor& values_out = {},
                               const Tensor& vectors_out = {});
Tensor eigvals(const Tensor& A, const Tensor& out = {});
std::tuple<Tensor, Tensor> eig_unrecorded(const Tensor& A, bool vectors, const char* op);

// ---- svd / svdvals ------------------------------------------------------------------------
// driver must be empty: PyTorch accepts it only for CUDA inputs.
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices = true,
                                       const std::optional<std::string>& driver = std::nullopt,
                                       const Tensor& U_out = {}, const Tensor& S_out = {},
                                       const Tensor& Vh_out = {});
Tensor svdvals(const Tensor& A, const std::optional<std::string>& driver = std::nullopt,
               const Tensor& out = {});
// The computation without checks or recording; U and Vh undefined unless compute_uv.
std::tuple<Tensor, Tensor, Tensor> svd_unrecorded(const Tensor& A, bool full_matrices,
                                                  bool compute_uv, const char* op);

// ---- qr (mode: "reduced", "complete" or "r") and householder_product -----------------------
std::tuple<Tensor, Tensor> qr(const Tensor& A, const std::string& mode = "reduced",
                              const Tensor& Q_out = {}, const Tensor& R_out = {});
std::tuple<Tensor, Tensor> qr_unrecorded(const Tensor& A, const std::string& mode, const char* op);
// geqrf's (compact QR, tau) without checks or recording.
// R_rows > 0 also extracts R (R_rows x n, column-major) as the third result.
std::tuple<Tensor, Tensor, Tensor> compact_qr(const Tensor& A, const char* op, int64_t R_rows = 0);
// The product of the Householder reflectors H_1 ... H_k (k = tau.size(-1)) stored below the
// diagonal of A's first k columns (LAPACK's orgqr / ungqr): the first n columns of Q.
Tensor householder_product(const Tensor& A, const Tensor& tau, const Tensor& out = {});
Tensor householder_product_unrecorded(const Tensor& A, const Tensor& tau);

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

// ---- pinv, matrix_rank, matrix_norm, norm, cond (composites of the decompositions) ---------
// atol / rtol: tensors broadcasting against the batch (undefined: PyTorch's defaults, rtol =
// eps * max(m, n) unless atol > 0).
Tensor pinv(const Tensor& A, const Tensor& atol = {}, const Tensor& rtol = {},
            bool hermitian = false, const Tensor& out = {});
Tensor matrix_rank(const Tensor& A, const Tensor& atol = {}, const Tensor& rtol = {},
                   bool hermitian = false, const Tensor& out = {});
// ord: a number (+-1, +-2, +-inf) or "fro" / "nuc" (exactly one of ord / ord_str is used).
struct NormOrd {
  std::optional<double> number;
  std::optional<std::string> name;
};
Tensor matrix_norm(const Tensor& A, const NormOrd& ord, IntArrayRef dim = {-2, -1},
                   bool keepdim = false, ScalarType dtype = ScalarType::Undefined,
                   const Tensor& out = {});
// linalg.norm: ord unset (neither field) means the 2-norm / Frobenius norm.
Tensor norm(const Tensor& A, const NormOrd& ord, const std::optional<std::vector<int64_t>>& dim,
            bool keepdim = false, ScalarType dtype = ScalarType::Undefined, const Tensor& out = {});
// ord unset: 2.
Tensor cond(const Tensor& A, const NormOrd& ord, const Tensor& out = {});

// ---- matrix_sqrth and polar (ops/linalg_polar.cpp) ----------------------------------------
// The principal square root of Hermitian positive-(semi)definite matrices (lower triangle read,
// negative eigenvalues taken as zero).
Tensor matrix_sqrth(const Tensor& A);
// (s, V): the square roots of A's eigenvalues (clamped at zero) and its eigenvectors, so that
// sqrt(A) = V diag(s) V^H; no checks or recording.
std::tuple<Tensor, Tensor> matrix_sqrth_factors(const Tensor& A, const char* op);
Tensor matrix_sqrth_from_factors(const Tensor& s, const Tensor& V);
// The polar decomposition A = U H of (..., m, n) matrices with m >= n.
std::tuple<Tensor, Tensor> polar(const Tensor& A, const Tensor& U_out = {},
                                 const Tensor& H_out = {});
// (U, H, S, V) from the reduced svd A = W diag(S) V^H: U = W V^H, H = V diag(S) V^H; no checks
// or recording.
std::tuple<Tensor, Tensor, Tensor, Tensor> polar_factors(const Tensor& A);

}  // namespace linalg

// torch.pinverse(input, rcond=1e-15).
Tensor pinverse(const Tensor& A, double rcond = 1e-15);

// torch.geqrf: (a, tau), LAPACK's compact QR (not differentiable, as in PyTorch).
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

// ---- kernels (CPU: LAPACK) ----------------------------------------------------------------
// Every kernel receives column-major batches it may overwrite and an int32 `infos` tensor of
// batch_count entries (LAPACK's info per matrix).

// A (..., n, n) is overwritten with the eigenvectors (when `vectors`); values (..., n) real.
using EighFn = void (*)(const Tensor& A, const Tensor& values, const Tensor& infos, bool upper,
                        bool vectors);
EMBER_DECLARE_STUB(linalg_eigh_stub, EighFn);

// A (..., n, n) is destroyed; values (..., n) complex; vectors (..., n, n) complex column-major
// (undefined: values only). LAPACK's ?geev, real pairs expanded to complex conjugate vectors.
using EigFn = void (*)(const Tensor& A, const Tensor& values, const Tensor& vectors,
                       const Tensor& infos);
EMBER_DECLARE_STUB(linalg_eig_stub, EigFn);

// A (..., m, n) is destroyed; S (..., k) real; U and Vh column-major, (..., m, m) and (..., n, n)
// for jobz 'A', (..., m, k) and (..., k, n) for 'S', undefined for 'N' (values only).
using SvdFn = void (*)(const Tensor& A, const Tensor& U, const Tensor& S, const Tensor& Vh,
                       const Tensor& infos, char jobz);
EMBER_DECLARE_STUB(linalg_svd_stub, SvdFn);

// A (..., m, n) is overwritten with geqrf's compact QR; tau (..., min(m, n)). R, when defined
// (..., r, n) column-major with r <= m, receives the upper triangle of A's first r rows (zeros
// below), copied while the matrix is still in cache.
using GeqrfFn = void (*)(const Tensor& A, const Tensor& tau, const Tensor& R, const Tensor& infos);
EMBER_DECLARE_STUB(linalg_geqrf_stub, GeqrfFn);
// Q (..., m, n), m >= n, holds reflectors in its first k = tau.size(-1) columns and is
// overwritten with the product of the reflectors (orgqr / ungqr).
using OrgqrFn = void (*)(const Tensor& Q, const Tensor& tau, const Tensor& infos);
EMBER_DECLARE_STUB(linalg_orgqr_stub, OrgqrFn);
// Reduced QR of small real matrices in one pass per matrix (each stays in L1 from the read of A
// to the writes of Q and R): A (..., m, n), m >= n, contiguous row-major or a column-major batch;
// Q (..., m, n) and R (..., n, n) column-major. Returns false, having written nothing, for the
// inputs it does not take (dtype, size); the caller then runs geqrf and orgqr.
using QrSmallFn = bool (*)(const Tensor& A, const Tensor& Q, const Tensor& R);
// The largest matrix (m * n) linalg_qr_small_stub takes: 64 x 64 doubles, 32 KiB (L1).
constexpr int64_t kQrSmallMaxElements = 64 * 64;
EMBER_DECLARE_STUB(linalg_qr_small_stub, QrSmallFn);

// A (..., m, n) is destroyed; B (..., max(m, n), k) holds the right-hand sides in its first m
// rows and receives the solutions in its first n rows. rank (int64, batch) is written by
// gelsy / gelsd / gelss, S (..., min(m, n)) by gelsd / gelss.
enum class LstsqDriver { gels, gelsy, gelsd, gelss };
using LstsqFn = void (*)(const Tensor& A, const Tensor& B, const Tensor& rank, const Tensor& S,
                         const Tensor& infos, LstsqDriver driver, double rcond);
EMBER_DECLARE_STUB(linalg_lstsq_stub, LstsqFn);

}  // namespace native
}  // namespace ember
