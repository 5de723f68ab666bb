// linalg.matrix_exp's derivative, as PyTorch's (FunctionsManual linalg_matrix_exp_differential):
// for f analytic, f([[X, G], [0, X]]) = [[f(X), Df(X)[G]], [0, f(X)]], and the gradient of
// <G, exp(A)> is D exp(A^H)[G]. The block matrix is built and exponentiated with public ops, so
// the formula is differentiable again (gradgradcheck).
#include "autograd/derivatives/linalg/misc.h"

#include "api/join.h"
#include "api/linalg/common.h"
#include "api/linalg/misc.h"
#include "api/views.h"
#include "autograd/derivatives/common.h"
#include "autograd/record.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

Tensor matrix_exp_differential(const Tensor& A, const Tensor& G, bool adjoint) {
  const int64_t n = linalg::cols(A);
  const Tensor X = adjoint ? mH(A) : A;
  const Tensor top = cat({X, G}, -1);
  const Tensor bottom = cat({zeros_for(A.sizes(), A), X}, -1);
  const Tensor block = ember::linalg_matrix_exp(cat({top, bottom}, -2));
  return narrow(narrow(block, -2, 0, n), -1, n, n);
}

Tensor linalg_matrix_exp(const Tensor& A) {
  auto node = autograd::new_node(
      "LinalgMatrixExpBackward0", {A}, [](FunctionNode& n, const variable_list& g) {
        return variable_list{matrix_exp_differential(n.saved(0), g[0], true)};
      });
  node->save(A);
  return autograd::record(node, {A}, Tensor(), "linalg.matrix_exp",
                          [&] { return native::linalg_matrix_exp(A); });
}

}  // namespace derivatives
}  // namespace ember
