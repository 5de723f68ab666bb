// Recording wrappers of the spectral family (see linalg_spectral.h).
#include "autograd/derivatives/linalg_spectral.h"

#include "autograd/record.h"
#include "ops/linalg_spectral.h"
#include "ops/views.h"

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

}  // namespace derivatives
}  // namespace ember
