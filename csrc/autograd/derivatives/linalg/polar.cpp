// Derivatives of linalg.matrix_sqrth and linalg.polar (see linalg_spectral.h).
//
// Both gradients go through the Sylvester operator L(Z) = Z M + M Z of a Hermitian positive-
// definite M = V diag(s) V^H, whose inverse in M's eigenbasis divides entrywise by s_i + s_j:
// finite at repeated eigenvalues, unlike the eigh / svd formulas.
//  - sqrt(A) = X: X dX + dX X = dA, so gA = L_X^{-1}(herm(gX)) (Hermitian, as PyTorch's: only
//    one triangle of A is read, and the gradient is that of the Hermitian function).
//  - A = U H (m >= n): with Y = U^H (gU + A gH^H),
//      gA = U L_H^{-1}(Y - Y^H) + (I - U U^H) (gU + A gH^H) H^{-1} + U gH,
//    the last-but-one term only when m > n (U is unitary when m == n).
// First-order backward uses the eigenbasis saved by the forward pass; under create_graph the
// basis is recomputed from the saved outputs with the recorded eigh, so that double backward
// differentiates through it.
#include "api/elementwise.h"
#include "api/linalg/spectral.h"
#include "api/matmul.h"
#include "api/views.h"
#include "autograd/derivatives/common.h"
#include "autograd/derivatives/linalg/spectral.h"
#include "autograd/grad_mode.h"
#include "autograd/record.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

// L^{-1}(Z) for L(Z) = Z M + M Z, M = V diag(s) V^H.
Tensor inverse_sylvester(const Tensor& V, const Tensor& s, const Tensor& Z) {
  const Tensor denominators = ember::add(ember::unsqueeze(s, -1), ember::unsqueeze(s, -2));
  const Tensor in_basis = ember::matmul(ember::matmul(ember::mH(V), Z), V);
  return ember::matmul(ember::matmul(V, ember::div(in_basis, denominators)), ember::mH(V));
}

}  // namespace

Tensor linalg_matrix_sqrth(const Tensor& A) {
  auto node = autograd::new_node(
      "LinalgMatrixSqrthBackward0", {A}, [](FunctionNode& n, const variable_list& g) {
        if (!g[0].defined()) return variable_list{Tensor()};
        Tensor s, V;
        if (autograd::GradMode::is_enabled()) {
          std::tie(s, V) = linalg::eigh(n.saved(0));  // recorded: double backward
        } else {
          s = n.saved(1);
          V = n.saved(2);
        }
        const Tensor herm = ember::mul(ember::add(g[0], ember::mH(g[0])), num(0.5));
        return variable_list{inverse_sylvester(V, s, herm)};
      });
  Tensor X, s, V;
  {
    autograd::NoGradGuard no_grad;
    std::tie(s, V) = linalg::matrix_sqrth_factors(A, "linalg.matrix_sqrth");
    X = linalg::matrix_sqrth_from_factors(s, V);
  }
  autograd::set_history_all(node, {X});
  node->save(X, /*is_output=*/true);
  node->save(s);
  node->save(V);
  return X;
}

std::tuple<Tensor, Tensor> linalg_polar(const Tensor& A) {
  auto node =
      autograd::new_node("LinalgPolarBackward0", {A}, [](FunctionNode& n, const variable_list& g) {
        const Tensor &gU = g[0], &gH = g[1];
        if (!gU.defined() && !gH.defined()) return variable_list{Tensor()};
        const Tensor A = n.saved(0), U = n.saved(1), H = n.saved(2);
        Tensor s, V;
        if (autograd::GradMode::is_enabled()) {
          std::tie(s, V) = linalg::eigh(H);  // recorded: double backward
        } else {
          s = n.saved(3);
          V = n.saved(4);
        }
        // The gradient reaching U, counting H = U^H A's dependence on U.
        Tensor gU_total = gU;
        if (gH.defined()) {
          const Tensor through_H = ember::matmul(A, ember::mH(gH));
          gU_total = gU_total.defined() ? ember::add(gU_total, through_H) : through_H;
        }
        const Tensor UH = ember::mH(U);
        const Tensor Y = ember::matmul(UH, gU_total);
        Tensor gA = ember::matmul(U, inverse_sylvester(V, s, ember::sub(Y, ember::mH(Y))));
        if (A.size(A.dim() - 2) > A.size(A.dim() - 1)) {
          // The part of gU outside U's column space, through U = A H^{-1}.
          const Tensor P = ember::matmul(
              ember::div(ember::matmul(gU_total, V), ember::unsqueeze(s, -2)), ember::mH(V));
          gA = ember::add(gA, ember::sub(P, ember::matmul(U, ember::matmul(UH, P))));
        }
        if (gH.defined()) gA = ember::add(gA, ember::matmul(U, gH));
        return variable_list{gA};
      });
  Tensor U, H, S, V;
  {
    autograd::NoGradGuard no_grad;
    std::tie(U, H, S, V) = linalg::polar_factors(A);
  }
  node->save(A);
  autograd::set_history_all(node, {U, H});
  node->save(U, /*is_output=*/true);
  node->save(H, /*is_output=*/true);
  node->save(S);
  node->save(V);
  return {U, H};
}

}  // namespace derivatives
}  // namespace ember
