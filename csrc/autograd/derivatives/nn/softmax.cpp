// Derivatives of softmax and log_softmax (see nn_softmax.h).
#include "autograd/derivatives/nn/softmax.h"

#include <vector>

#include "api/elementwise.h"
#include "api/nn/softmax.h"
#include "api/reduce.h"
#include "api/unary.h"
#include "api/views.h"
#include "autograd/grad_mode.h"
#include "autograd/record.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

Tensor softmax(const Tensor& x, int64_t dim, ScalarType dtype, bool log) {
  const char* op = log ? "log_softmax" : "softmax";
  auto node =
      autograd::new_node(log ? "LogSoftmaxBackward0" : "SoftmaxBackward0", {x},
                         [dim, log](FunctionNode& n, const variable_list& g) {
                           const Tensor y = n.saved(0);
                           if (!g[0].defined()) return variable_list(1);
                           if (!autograd::GradMode::is_enabled()) {
                             return variable_list{ember::softmax_backward_data(g[0], y, dim, log)};
                           }
                           const std::vector<int64_t> d{dim};
                           if (log) {
                             return variable_list{ember::sub(
                                 g[0], ember::mul(ember::exp(y), ember::sum(g[0], d, true)))};
                           }
                           return variable_list{ember::mul(
                               y, ember::sub(g[0], ember::sum(ember::mul(g[0], y), d, true)))};
                         });
  if (node->has_forward()) {
    // softmax: y (dx - sum(y dx)); log_softmax: dx - sum(exp(y) dx), along dim.
    node->set_jvp([dim, log](FunctionNode& n, const variable_list& t) -> variable_list {
      if (!t[0].defined()) return {Tensor()};
      const Tensor y = n.saved(0);
      const Tensor dx = t[0].dtype() == y.dtype() ? t[0] : ember::to_dtype(t[0], y.dtype());
      const std::vector<int64_t> d{dim};
      const Tensor p = log ? ember::exp(y) : y;
      const Tensor centered = ember::sub(dx, ember::sum(ember::mul(p, dx), d, true));
      return {log ? centered : ember::mul(y, centered)};
    });
  }
  Tensor r = autograd::record(node, {x}, Tensor(), op, [&] {
    return log ? native::log_softmax(x, dim, dtype) : native::softmax(x, dim, dtype);
  });
  node->save(r, /*is_output=*/true);
  return r;
}

}  // namespace derivatives
}  // namespace ember
