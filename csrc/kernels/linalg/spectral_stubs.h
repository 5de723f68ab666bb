// Kernel stubs of ember.linalg's spectral family (ops/linalg/spectral.h includes this header):
// eigh, eig, svd, geqrf, orgqr, the small-matrix QR and lstsq, registered by the LAPACK kernels
// kernels/cpu/linalg/<name>.cpp.
//
// Every kernel receives column-major batches it may overwrite and an int32 `infos` tensor of
// batch_count entries (LAPACK's info per matrix).
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {

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
