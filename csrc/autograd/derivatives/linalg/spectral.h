// Derivatives of ember.linalg's spectral family (ops/linalg/spectral.h). Each wrapper runs the op
// with recording off and attaches a node whose formula is PyTorch's (FunctionsManual.cpp),
// written with public ops so that double backward works. The formulas themselves are in
// linalg_spectral_backward.cpp.
//
// Ill-defined cases, as PyTorch: the gradients of eigenvectors and singular vectors divide by
// differences of eigenvalues (squared singular values), so repeated ones give inf/nan; complex
// eigenvectors and singular vectors are defined up to a phase, and a loss that depends on the
// phase raises a RuntimeError in backward.
#pragma once
#include <optional>
#include <string>
#include <tuple>

#include "core/tensor.h"

namespace ember {
namespace derivatives {

// eigh: node LinalgEighBackward0 over (eigenvalues, eigenvectors).
std::tuple<Tensor, Tensor> linalg_eigh(const Tensor& A, bool upper);
// eig: node LinalgEigBackward0 over (eigenvalues, eigenvectors).
std::tuple<Tensor, Tensor> linalg_eig(const Tensor& A);
// svd: node LinalgSvdBackward0 over (U, S, Vh).
std::tuple<Tensor, Tensor, Tensor> linalg_svd(const Tensor& A, bool full_matrices);
// qr: node LinalgQrBackward0 over (Q, R); mode 'r' and 'complete' with m > n raise in backward.
std::tuple<Tensor, Tensor> linalg_qr(const Tensor& A, const std::string& mode);
// householder_product: node LinalgHouseholderProductBackward0 (gradients for A and tau).
Tensor linalg_householder_product(const Tensor& A, const Tensor& tau);
// geqrf: node GeqrfBackward0, which raises (not differentiable, as in PyTorch).
std::tuple<Tensor, Tensor> geqrf(const Tensor& A);
// lstsq: node LinalgLstsqBackward0 over (solution, residuals); rank and singular_values are
// not differentiable.
std::tuple<Tensor, Tensor, Tensor, Tensor> linalg_lstsq(const Tensor& A, const Tensor& B,
                                                        std::optional<double> rcond,
                                                        const std::string& driver);

// matrix_sqrth: node LinalgMatrixSqrthBackward0; polar: node LinalgPolarBackward0 over (U, H).
// Their formulas solve Sylvester equations (finite at repeated eigenvalues, as PyTorch's).
Tensor linalg_matrix_sqrth(const Tensor& A);
std::tuple<Tensor, Tensor> linalg_polar(const Tensor& A);

// ---- formulas (public ops only) ------------------------------------------------------------

// PyTorch's linalg_eig_backward: gA from the gradients of the eigenvalues L and eigenvectors V
// (either may be undefined). Hermitian: A = V diag(L) V^H; otherwise V has unit-norm columns.
Tensor linalg_eig_backward(const Tensor& gL, const Tensor& gV, const Tensor& L, const Tensor& V,
                           bool hermitian);

// PyTorch's svd_backward: gA from the gradients of U, S, Vh (any may be undefined) of the
// reduced SVD (U (.., m, k), Vh (.., k, n)).
Tensor svd_backward(const Tensor& gU, const Tensor& gS, const Tensor& gVh, const Tensor& U,
                    const Tensor& S, const Tensor& Vh);

// PyTorch's linalg_qr_backward (mode "reduced" or "complete").
Tensor linalg_qr_backward(const Tensor& gQ, const Tensor& gR, const Tensor& Q, const Tensor& R,
                          const std::string& mode);
// PyTorch's householder_product_backward: (gradient of A, gradient of tau).
std::tuple<Tensor, Tensor> householder_product_backward(const Tensor& grad, const Tensor& result,
                                                        const Tensor& A, const Tensor& tau);

// PyTorch's pinv_backward: the gradient of A from the gradient of pinv(A).
Tensor pinv_backward(const Tensor& grad, const Tensor& pinvA, const Tensor& A);
// PyTorch's linalg_lstsq_backward: gradients of A and B from those of the solution X and the
// residuals L (either may be undefined).
std::tuple<Tensor, Tensor> linalg_lstsq_backward(const Tensor& gX, const Tensor& gL,
                                                 const Tensor& A, const Tensor& B, const Tensor& X);

}  // namespace derivatives
}  // namespace ember
