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
namespace linalg {

// ---- eigh / eigvalsh (uplo: "L" or "U") ---------------------------------------------------
std::tuple<Tensor, Tensor> eigh(const Tensor& A, const std::string& uplo = "L",
                                const Tensor& values_out = {}, const Tensor& vectors_out = {});
Tensor eigvalsh(const Tensor& A, const std::string& uplo = "L", const Tensor& out = {});
// The computation without checks or recording (vectors undefined unless asked for).
std::tuple<Tensor, Tensor> eigh_unrecorded(const Tensor& A, bool upper, bool vectors,
                                           const char* op);

}  // namespace linalg

// ---- kernels (CPU: LAPACK) ----------------------------------------------------------------
// Every kernel receives column-major batches it may overwrite and an int32 `infos` tensor of
// batch_count entries (LAPACK's info per matrix).

// A (..., n, n) is overwritten with the eigenvectors (when `vectors`); values (..., n) real.
using EighFn = void (*)(const Tensor& A, const Tensor& values, const Tensor& infos, bool upper,
                        bool vectors);
EMBER_DECLARE_STUB(linalg_eigh_stub, EighFn);

}  // namespace ember
