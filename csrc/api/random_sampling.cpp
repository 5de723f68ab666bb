// Recording of the gamma sampler and the Dirichlet composite (api/random_sampling.h).
#include "api/random_sampling.h"

#include "api/elementwise.h"
#include "api/reduce.h"
#include "autograd/record.h"
#include "autograd/variable.h"

namespace ember {

using autograd::FunctionNode;
using autograd::variable_list;

Tensor _standard_gamma(const Tensor& alpha, Generator* gen) {
  if (!autograd::should_record(alpha)) return native::_standard_gamma(alpha, gen);
  auto node = autograd::new_node(
      "StandardGammaBackward0", {alpha}, [](FunctionNode& n, const variable_list& g) {
        return variable_list{ember::mul(g[0], ember::_standard_gamma_grad(n.saved(0), n.saved(1)))};
      });
  node->save(alpha);
  Tensor r = autograd::record(node, {alpha}, Tensor(), "_standard_gamma",
                              [&] { return native::_standard_gamma(alpha, gen); });
  node->save(r, /*is_output=*/true);
  return r;
}

Tensor _standard_gamma_grad(const Tensor& self, const Tensor& output) {
  if (!autograd::should_record(self, output)) return native::_standard_gamma_grad(self, output);
  auto node = autograd::new_node("StandardGammaGradBackward0", {self, output},
                                 [](FunctionNode&, const variable_list&) -> variable_list {
                                   EMBER_CHECK_T(NotImplementedError, false,
                                                 "[_standard_gamma_grad] the derivative for "
                                                 "'_standard_gamma_grad' is not implemented");
                                   return {};
                                 });
  return autograd::record(node, {self, output}, Tensor(), "_standard_gamma_grad",
                          [&] { return native::_standard_gamma_grad(self, output); });
}

Tensor _sample_dirichlet(const Tensor& alpha, Generator* gen) {
  if (!autograd::should_record(alpha)) return native::_sample_dirichlet(alpha, gen);
  // Same streams as the native op (element i of the gammas uses stream i in both), so a seed
  // gives the same sample whether or not alpha requires grad.
  EMBER_CHECK(alpha.dim() >= 1, "[_sample_dirichlet] expected alpha with at least one dimension",
              " (the categories), got a 0-d tensor");
  Tensor g = ember::_standard_gamma(alpha, gen);
  return ember::div(g, ember::sum(g, std::vector<int64_t>{-1}, /*keepdim=*/true));
}

}  // namespace ember
