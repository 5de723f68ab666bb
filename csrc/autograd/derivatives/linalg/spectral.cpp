// Recording wrappers of the spectral family (see linalg_spectral.h).
#include "autograd/derivatives/linalg/spectral.h"

#include "api/linalg/spectral.h"
#include "api/views.h"
#include "autograd/record.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

std::tuple<Tensor, Tensor> linalg_eigh(const Tensor& A, bool upper) {
  auto node =
      autograd::new_node("LinalgEighBackward0", {A}, [](FunctionNode& n, const variable_list& g) {
        return variable_list{
            linalg_eig_backward(g[0], g[1], n.saved(0), n.saved(1), /*hermitian=*/true)};
      });
  Tensor L, V;
  {
    autograd::NoGradGuard no_grad;
    std::tie(L, V) = linalg::eigh_unrecorded(A, upper, /*vectors=*/true, "linalg.eigh");
  }
  autograd::set_history_all(node, {L, V});
  node->save(L, /*is_output=*/true);  // after set_history: a saved output records its output_nr
  node->save(V, /*is_output=*/true);
  return {L, V};
}

std::tuple<Tensor, Tensor> linalg_eig(const Tensor& A) {
  auto node =
      autograd::new_node("LinalgEigBackward0", {A}, [](FunctionNode& n, const variable_list& g) {
        return variable_list{
            linalg_eig_backward(g[0], g[1], n.saved(0), n.saved(1), /*hermitian=*/false)};
      });
  Tensor L, V;
  {
    autograd::NoGradGuard no_grad;
    std::tie(L, V) = linalg::eig_unrecorded(A, /*vectors=*/true, "linalg.eig");
  }
  autograd::set_history_all(node, {L, V});
  node->save(L, /*is_output=*/true);
  node->save(V, /*is_output=*/true);
  return {L, V};
}

std::tuple<Tensor, Tensor, Tensor> linalg_svd(const Tensor& A, bool full_matrices) {
  auto node = autograd::new_node("LinalgSvdBackward0", {A},
                                 [full_matrices](FunctionNode& n, const variable_list& g) {
                                   Tensor U = n.saved(0), S = n.saved(1), Vh = n.saved(2);
                                   Tensor gU = g[0], gVh = g[2];
                                   if (full_matrices) {
                                     // Only the first k columns of U and rows of Vh depend on A
                                     // (PyTorch's convention).
                                     const int64_t k = S.size(S.dim() - 1);
                                     U = ember::narrow(U, U.dim() - 1, 0, k);
                                     Vh = ember::narrow(Vh, Vh.dim() - 2, 0, k);
                                     if (gU.defined()) gU = ember::narrow(gU, gU.dim() - 1, 0, k);
                                     if (gVh.defined())
                                       gVh = ember::narrow(gVh, gVh.dim() - 2, 0, k);
                                   }
                                   return variable_list{svd_backward(gU, g[1], gVh, U, S, Vh)};
                                 });
  Tensor U, S, Vh;
  {
    autograd::NoGradGuard no_grad;
    std::tie(U, S, Vh) =
        linalg::svd_unrecorded(A, full_matrices, /*compute_uv=*/true, "linalg.svd");
  }
  autograd::set_history_all(node, {U, S, Vh});
  node->save(U, /*is_output=*/true);
  node->save(S, /*is_output=*/true);
  node->save(Vh, /*is_output=*/true);
  return {U, S, Vh};
}

std::tuple<Tensor, Tensor> linalg_qr(const Tensor& A, const std::string& mode) {
  auto node =
      autograd::new_node("LinalgQrBackward0", {A}, [mode](FunctionNode& n, const variable_list& g) {
        return variable_list{linalg_qr_backward(g[0], g[1], n.saved(0), n.saved(1), mode)};
      });
  Tensor Q, R;
  {
    autograd::NoGradGuard no_grad;
    std::tie(Q, R) = linalg::qr_unrecorded(A, mode, "linalg.qr");
  }
  autograd::set_history_all(node, {Q, R});
  node->save(Q, /*is_output=*/true);
  node->save(R, /*is_output=*/true);
  return {Q, R};
}

Tensor linalg_householder_product(const Tensor& A, const Tensor& tau) {
  auto node = autograd::new_node(
      "LinalgHouseholderProductBackward0", {A, tau}, [](FunctionNode& n, const variable_list& g) {
        auto [gA, gtau] = householder_product_backward(g[0], n.saved(2), n.saved(0), n.saved(1));
        return variable_list{gA, gtau};
      });
  node->save(A);
  node->save(tau);
  Tensor Q = autograd::record(node, {A, tau}, Tensor(), "linalg.householder_product",
                              [&] { return linalg::householder_product_unrecorded(A, tau); });
  node->save(Q, /*is_output=*/true);
  return Q;
}

std::tuple<Tensor, Tensor> geqrf(const Tensor& A) {
  auto node = autograd::new_node("GeqrfBackward0", {A}, [](FunctionNode&, const variable_list&) {
    throw NotImplementedError("[geqrf] the derivative for 'geqrf' is not implemented.");
    return variable_list{};
  });
  Tensor W, tau;
  {
    autograd::NoGradGuard no_grad;
    std::tie(W, tau, std::ignore) = linalg::compact_qr(A, "geqrf");
  }
  autograd::set_history_all(node, {W, tau});
  return {W, tau};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> linalg_lstsq(const Tensor& A, const Tensor& B,
                                                        std::optional<double> rcond,
                                                        const std::string& driver) {
  auto node = autograd::new_node(
      "LinalgLstsqBackward0", {A, B}, [](FunctionNode& n, const variable_list& g) {
        auto [gA, gB] = linalg_lstsq_backward(g[0], g[1], n.saved(0), n.saved(1), n.saved(2));
        return variable_list{gA, gB};
      });
  node->save(A);
  node->save(B);
  Tensor X, residuals, rank, sv;
  {
    autograd::NoGradGuard no_grad;
    std::tie(X, residuals, rank, sv) = linalg::lstsq_unrecorded(A, B, rcond, driver);
  }
  // Only the solution and the residuals are differentiable (rank is an integer, and PyTorch
  // leaves the singular values without history).
  autograd::set_history_all(node, {X, residuals});
  node->save(X, /*is_output=*/true);
  return {X, residuals, rank, sv};
}

}  // namespace derivatives
}  // namespace ember
