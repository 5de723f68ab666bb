// Recording wrappers of the spectral family (see linalg_spectral.h).
#include "autograd/derivatives/linalg_spectral.h"

#include "autograd/record.h"
#include "ops/linalg_spectral.h"

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

}  // namespace derivatives
}  // namespace ember
