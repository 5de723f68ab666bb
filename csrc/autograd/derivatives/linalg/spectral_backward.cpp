// The backward formulas of the spectral family, transcribed from PyTorch's FunctionsManual.cpp
// with Ember's public ops (so that they record themselves under create_graph=True).
#include "api/compare.h"
#include "api/complex.h"
#include "api/elementwise.h"
#include "api/join.h"
#include "api/linalg/solve.h"
#include "api/linalg/spectral.h"
#include "api/matmul.h"
#include "api/range_factories.h"
#include "api/reduce.h"
#include "api/unary.h"
#include "api/views.h"
#include "autograd/derivatives/common.h"
#include "autograd/derivatives/linalg/spectral.h"
#include "core/dtype.h"

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
    // eigvals / eigvalsh: gA = V^{-H} diag(gL) V^H
    if (hermitian) return mm_(ember::mul(V, ember::unsqueeze(gL, -2)), VH);
    return linalg_solve(VH, ember::mul(ember::unsqueeze(gL, -1), VH), /*left=*/true);
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
    VhgV = ember::mul(ember::sub(VhgV, ember::mH(VhgV)), num(0.5));
  } else {
    // Projection onto the tangent space of matrices with unit-norm columns.
    VhgV = ember::sub(VhgV, mm_(VH, ember::mul(V, ember::unsqueeze(ember::real(diag), -2))));
  }
  Tensor gA = ember::div(VhgV, pairwise_differences(ember::conj(L)));
  if (gL.defined()) gA = with_diagonal(gA, gL);
  // Conjugation by V^{-H}
  if (hermitian) return mm_(V, mm_(gA, VH));
  return linalg_solve(VH, mm_(gA, VH), /*left=*/true);
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
    gA = ember::add(gA, ember::diag_embed(ember::div(diag_of(UhgU), ember::mul(S, num(2.0)))));
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

Tensor linalg_qr_backward(const Tensor& gQ, const Tensor& gR, const Tensor& Q, const Tensor& R,
                          const std::string& mode) {
  // m >= n: gA = (gQ + Q syminvadj(triu(gR R^H - Q^H gQ))) R^{-H}
  // m < n:  gA = [Q trilImInvAdjSkew(Q^H gQ - gR R^H) R_1^{-H}, 0] + Q gR
  EMBER_CHECK(mode != "r",
              "[linalg.qr] The derivative of linalg.qr depends on Q, which is not computed when "
              "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
              "differentiate through linalg.qr.");
  const int64_t m = Q.size(Q.dim() - 2), n = R.size(R.dim() - 1);
  EMBER_CHECK(mode == "reduced" || m <= n,
              "[linalg.qr] The QR decomposition is not differentiable when mode='complete' and "
              "nrows > ncols.");
  if (!gQ.defined() && !gR.defined()) return Tensor();
  const Tensor QH = ember::mH(Q);
  Tensor gA;
  if (gQ.defined() && gR.defined()) {
    gA = ember::sub(mm_(gR, ember::mH(R)), mm_(QH, gQ));
  } else if (gQ.defined()) {
    gA = ember::neg(mm_(QH, gQ));
  } else {
    gA = mm_(gR, ember::mH(R));
  }
  if (m >= n) {
    // syminvadj(X) = X + X^H with the real part of the diagonal halved
    Tensor X = ember::triu(gA);
    X = ember::add(X, ember::mH(X));
    X = ember::sub(X, ember::diag_embed(ember::mul(ember::real(diag_of(X)), num(0.5))));
    gA = mm_(Q, X);
    if (gQ.defined()) gA = ember::add(gA, gQ);
    return linalg_solve_triangular(ember::mH(R), gA, /*upper=*/false, /*left=*/false,
                                   /*unitriangular=*/false);
  }
  // trilImInvAdjSkew(-gA): tril(Y - Y^H) with the imaginary part of the diagonal halved
  const Tensor Y = ember::neg(gA);
  Tensor X = ember::tril(ember::sub(Y, ember::mH(Y)));
  if (is_complex(X.dtype())) {
    const Tensor half_i = wrap_scalar(Scalar(std::complex<double>(0.0, 0.5)));
    X = ember::sub(X, ember::diag_embed(ember::mul(ember::imag(diag_of(X)), half_i)));
  }
  gA = mm_(Q, X);
  gA = linalg_solve_triangular(ember::mH(ember::narrow(R, R.dim() - 1, 0, m)), gA,
                               /*upper=*/false, /*left=*/false, /*unitriangular=*/false);
  DimVector zeros_shape(R.sizes());
  zeros_shape.back() = n - m;
  gA = ember::cat({gA, zeros_for(zeros_shape, gA)}, -1);
  if (gR.defined()) gA = ember::add(gA, mm_(Q, gR));
  return gA;
}

std::tuple<Tensor, Tensor> householder_product_backward(const Tensor& grad, const Tensor& result,
                                                        const Tensor& A, const Tensor& tau) {
  // The product is H_1 ... H_k with H_i = I - tau_i v_i v_i^H, v_i the i-th column of the unit
  // lower-triangular part of A. K is moved along the chain with H_i and their inverses
  // H(sigma_i), sigma_i = tau_i / (tau_i ||v_i||^2 - 1); each step reads the gradient of v_i and
  // tau_i off K (PyTorch's algorithm, in its out-of-place form so that it records).
  if (!grad.defined() || A.numel() == 0 || tau.numel() == 0) return {Tensor(), Tensor()};
  const int64_t m = A.size(A.dim() - 2), ncols = A.size(A.dim() - 1);
  const int64_t k = tau.size(tau.dim() - 1);
  const Tensor V = ember::add(ember::tril(A, -1), eye(m, ncols, TensorOptions(A.dtype())));
  const Tensor Vk = ember::narrow(V, -1, 0, k);
  const Tensor norms = ember::sum(ember::mul(Vk, ember::conj(Vk)), std::vector<int64_t>{-2});
  const Tensor sigma = ember::div(tau, ember::sub(ember::mul(tau, norms), num(1.0)));
  const auto column = [&](const Tensor& t, int64_t i) { return ember::narrow(t, -1, i, 1); };
  // (I - t v v^H) K (left) or K (I - t v v^H) (right); v (..., m, 1), t (..., 1)
  const auto reflect = [](const Tensor& v, const Tensor& t, const Tensor& K, bool left) {
    const Tensor tv = ember::mul(ember::unsqueeze(t, -1), v);
    return left ? ember::sub(K, ember::mul(tv, mm_(ember::mH(v), K)))
                : ember::sub(K, ember::mul(mm_(K, tv), ember::mH(v)));
  };
  Tensor K = mm_(result, ember::mH(grad));
  K = reflect(column(V, 0), column(sigma, 0), K, /*left=*/true);
  std::vector<Tensor> A_grads, tau_grads;
  for (int64_t i = 0; i < k; ++i) {
    const Tensor v_i = column(V, i), t_i = column(tau, i);
    const Tensor v = ember::narrow(v_i, -2, i, m - i);
    const Tensor vHK = mm_(ember::mH(v), ember::narrow(K, -2, i, m - i));  // (..., 1, m)
    const Tensor Kv = mm_(ember::narrow(K, -1, i, m - i), v);              // (..., m, 1)
    const Tensor t = ember::unsqueeze(t_i, -1);
    const Tensor v_grad = ember::sub(ember::mH(ember::neg(ember::mul(t, vHK))), ember::mul(t, Kv));
    A_grads.push_back(v_grad);
    tau_grads.push_back(
        ember::squeeze(ember::neg(ember::conj(mm_(ember::narrow(vHK, -1, i, m - i), v))), {-1}));
    if (i + 1 < k) {
      K = reflect(column(V, i + 1), column(sigma, i + 1), K, /*left=*/true);
      K = reflect(v_i, t_i, K, /*left=*/false);
    }
  }
  if (k < ncols) {
    DimVector shape(A.sizes());
    shape.back() = ncols - k;
    A_grads.push_back(zeros_for(shape, K));
  }
  return {ember::tril(ember::cat(A_grads, -1), -1), ember::cat(tau_grads, -1)};
}

Tensor pinv_backward(const Tensor& grad, const Tensor& pinvA, const Tensor& A) {
  const int64_t m = A.size(A.dim() - 2), n = A.size(A.dim() - 1);
  const Tensor pinvAh = ember::mH(pinvA), gradh = ember::mH(grad);
  // Ordered to keep the intermediate products of the smaller dimension.
  if (m <= n) {
    const Tensor K = mm_(gradh, pinvA);
    const Tensor KpinvAh = mm_(K, pinvAh);
    Tensor r = ember::sub(KpinvAh, ember::mH(mm_(pinvA, K)));
    r = ember::sub(r, mm_(mm_(A, pinvA), KpinvAh));
    return ember::add(r, mm_(mm_(pinvAh, pinvA), ember::sub(gradh, mm_(K, A))));
  }
  const Tensor K = mm_(pinvA, gradh);
  const Tensor pinvAhK = mm_(pinvAh, K);
  Tensor r = ember::neg(ember::mH(mm_(K, pinvA)));
  r = ember::add(r, mm_(mm_(ember::sub(gradh, mm_(A, K)), pinvA), pinvAh));
  return ember::sub(ember::add(r, pinvAhK), mm_(mm_(pinvAhK, pinvA), A));
}

std::tuple<Tensor, Tensor> linalg_lstsq_backward(const Tensor& gX_, const Tensor& gL_,
                                                 const Tensor& A, const Tensor& B_,
                                                 const Tensor& X_) {
  // X = pinv(A) B: gA from pinv_backward, gB = pinv(A)^H gX; the residuals L = ||A X - B||^2
  // add gA += 2 (gL r) X^H and gB -= 2 gL r with r = A X - B (Danskin: X is optimal).
  const bool has_gL = gL_.defined() && gL_.numel() > 0;
  if (!gX_.defined() && !has_gL) return {Tensor(), Tensor()};
  const bool vector_case = linalg::lstsq_vector_case(A, B_);
  const auto to_matrix = [&](const Tensor& t) { return vector_case ? ember::unsqueeze(t, -1) : t; };
  const auto to_vector = [&](const Tensor& t) { return vector_case ? ember::squeeze(t, {-1}) : t; };
  const Tensor B = to_matrix(B_);
  Tensor gA, gB;
  if (gX_.defined()) {
    const Tensor gX = to_matrix(gX_);
    const Tensor pinvA = linalg::pinv(A);
    gA = pinv_backward(mm_(gX, ember::mH(B)), pinvA, A);
    gB = to_vector(mm_(ember::mH(pinvA), gX));
  }
  if (has_gL) {
    const Tensor X = to_matrix(X_);
    const Tensor r = ember::sub(mm_(A, X), B);
    const Tensor gL = ember::unsqueeze(gL_, -2);
    const Tensor gA_L = ember::mul(mm_(ember::mul(gL, r), ember::mH(X)), num(2.0));
    const Tensor gB_L = to_vector(ember::mul(ember::mul(gL, r), num(-2.0)));
    gA = gA.defined() ? ember::add(gA, gA_L) : gA_L;
    gB = gB.defined() ? ember::add(gB, gB_L) : gB_L;
  }
  return {gA, gB};
}

}  // namespace derivatives
}  // namespace ember
