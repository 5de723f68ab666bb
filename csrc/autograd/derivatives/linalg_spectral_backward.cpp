// The backward formulas of the spectral family, transcribed from PyTorch's FunctionsManual.cpp
// with Ember's public ops (so that they record themselves under create_graph=True).
#include "autograd/derivatives/common.h"
#include "autograd/derivatives/linalg_spectral.h"
#include "core/dtype.h"
#include "ops/compare_ops.h"
#include "ops/complex_ops.h"
#include "ops/elementwise.h"
#include "ops/join.h"
#include "ops/matmul.h"
#include "ops/range_factories.h"
#include "ops/unary_ops.h"
#include "ops/views.h"

namespace ember {
namespace derivatives {

namespace {

Tensor mm_(const Tensor& a, const Tensor& b) {
  return ember::matmul(a, b);
}

Tensor diag_of(const Tensor& t) {
  return ember::diagonal(t, 0, -2, -1);
}

// X with its diagonal replaced by d (out of place, so that it records).
Tensor with_diagonal(const Tensor& X, const Tensor& d) {
  return ember::add(ember::sub(X, ember::diag_embed(diag_of(X))), ember::diag_embed(d));
}

// E_{ij} = x_j - x_i off the diagonal and 1 on it (the denominators of the spectral formulas).
Tensor pairwise_differences(const Tensor& x) {
  const int64_t n = x.size(x.dim() - 1);
  Tensor E = ember::sub(ember::unsqueeze(x, -2), ember::unsqueeze(x, -1));
  return ember::add(E, eye(n, n, TensorOptions(E.dtype())));
}

}  // namespace

Tensor linalg_eig_backward(const Tensor& gL, const Tensor& gV, const Tensor& L, const Tensor& V,
                           bool hermitian) {
  // https://arxiv.org/pdf/1701.00392.pdf Eq 4.77: for A = V L V^{-1},
  // gA = V^{-H} (diag_embed(gL) + (V^H gV - V^H V diag(Re(V^H gV))) / E*) V^H,
  // E_ij = L_j - L_i; the Hermitian case uses V^{-1} = V^H and real L.
  if (!gL.defined() && !gV.defined()) return Tensor();
  const Tensor VH = ember::mH(V);
  if (!gV.defined()) {
    EMBER_CHECK(hermitian, "[linalg_eig_backward] the non-Hermitian case needs linalg.solve");
    return mm_(ember::mul(V, ember::unsqueeze(gL, -2)), VH);
  }
  Tensor VhgV = mm_(VH, gV);
  const Tensor diag = diag_of(VhgV);
  if (is_complex(V.dtype())) {
    // The loss must not depend on the phase of each eigenvector: Im(diag(V^H gV)) == 0.
    const Tensor im = ember::imag(diag);
    EMBER_CHECK(allclose(im, zeros_for(im.sizes(), im), 1e-2, 1e-2), "[",
                hermitian ? "linalg_eigh_backward" : "linalg_eig_backward",
                "] The eigenvectors in the complex case are specified up to multiplication by "
                "e^{i phi}. The specified loss function depends on this quantity, so it is "
                "ill-defined.");
  }
  if (hermitian) {
    // Projection onto the skew-Hermitian matrices (the tangent space of U(n) at the identity).
    VhgV = ember::mul(ember::sub(VhgV, ember::mH(VhgV)), number(0.5));
  } else {
    // Projection onto the tangent space of matrices with unit-norm columns.
    VhgV = ember::sub(VhgV, mm_(VH, ember::mul(V, ember::unsqueeze(ember::real(diag), -2))));
  }
  Tensor gA = ember::div(VhgV, pairwise_differences(ember::conj(L)));
  if (gL.defined()) gA = with_diagonal(gA, gL);
  EMBER_CHECK(hermitian, "[linalg_eig_backward] the non-Hermitian case needs linalg.solve");
  return mm_(V, mm_(gA, VH));
}

Tensor svd_backward(const Tensor& gU, const Tensor& gS, const Tensor& gVh, const Tensor& U,
                    const Tensor& S, const Tensor& Vh) {
  // Assumes distinct singular values, and full rank when A is rectangular or complex. With
  // skew(X) = X - X^H and E_jk = S_k^2 - S_j^2 (1 on the diagonal):
  //   gA = U [(skew(U^H gU) / E) S + S (skew(V^H gV) / E) + I o gS
  //           + i Im(diag(U^H gU)) / (2S)] V^H
  //        + (I_m - U U^H) gU S^{-1} V^H          (m > n)
  //        + U S^{-1} gV^H (I_n - V V^H)          (m < n)
  if (!gU.defined() && !gS.defined() && !gVh.defined()) return Tensor();
  const int64_t m = U.size(U.dim() - 2), n = Vh.size(Vh.dim() - 1);
  if (!gU.defined() && !gVh.defined()) {
    // svdvals: gA = U diag(gS) Vh
    return m >= n ? mm_(U, ember::mul(ember::unsqueeze(gS, -1), Vh))
                  : mm_(ember::mul(U, ember::unsqueeze(gS, -2)), Vh);
  }
  const bool complex = is_complex(U.dtype());
  const auto skew = [](const Tensor& X) { return ember::sub(X, ember::mH(X)); };
  const Tensor UhgU = gU.defined() ? skew(mm_(ember::mH(U), gU)) : Tensor();
  const Tensor VhgV = gVh.defined() ? skew(mm_(Vh, ember::mH(gVh))) : Tensor();
  if (complex) {
    // The loss must not depend on the phases: Im(diag(U^H gU)) + Im(diag(V^H gV)) = 0.
    const Tensor zero = zeros_for(S.sizes(), S);
    const Tensor im_u = gU.defined() ? ember::imag(diag_of(UhgU)) : zero;
    const Tensor im_v = gVh.defined() ? ember::imag(diag_of(VhgV)) : zero;
    EMBER_CHECK(allclose(im_u, ember::neg(im_v), 1e-2, 1e-2),
                "[svd_backward] The singular vectors in the complex case are specified up to "
                "multiplication by e^{i phi}. The specified loss function depends on this phase "
                "term, making it ill-defined.");
  }
  const Tensor S_row = ember::unsqueeze(S, -2), S_col = ember::unsqueeze(S, -1);
  const Tensor E = pairwise_differences(ember::mul(S, S));
  Tensor gA;
  if (gU.defined() && gVh.defined()) {
    gA = ember::div(ember::add(ember::mul(UhgU, S_row), ember::mul(S_col, VhgV)), E);
  } else if (gU.defined()) {
    gA = ember::mul(ember::div(UhgU, E), S_row);
  } else {
    gA = ember::mul(S_col, ember::div(VhgV, E));
  }
  if (gS.defined()) gA = ember::add(gA, ember::diag_embed(gS));
  if (complex && gU.defined() && gVh.defined()) {
    gA = ember::add(gA, ember::diag_embed(ember::div(diag_of(UhgU), ember::mul(S, number(2.0)))));
  }
  if (m > n && gU.defined()) {
    gA = mm_(U, gA);
    const Tensor gUSinv = ember::div(gU, S_row);
    gA = ember::sub(ember::add(gA, gUSinv), mm_(U, mm_(ember::mH(U), gUSinv)));
    return mm_(gA, Vh);
  }
  if (m < n && gVh.defined()) {
    gA = mm_(gA, Vh);
    const Tensor SinvgVh = ember::div(gVh, S_col);
    gA = ember::sub(ember::add(gA, SinvgVh), mm_(mm_(SinvgVh, ember::mH(Vh)), Vh));
    return mm_(U, gA);
  }
  return m >= n ? mm_(U, mm_(gA, Vh)) : mm_(mm_(U, gA), Vh);
}

}  // namespace derivatives
}  // namespace ember
