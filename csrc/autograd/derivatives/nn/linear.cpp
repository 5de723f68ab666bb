// Derivative of F.linear (see nn_linear.h).
#include "autograd/derivatives/nn/linear.h"

#include <vector>

#include "api/complex.h"
#include "api/matmul.h"
#include "api/nn/linear.h"
#include "api/reduce.h"
#include "api/views.h"
#include "autograd/derivatives/jvp.h"
#include "autograd/record.h"
#include "ops/nn/linear.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  auto node = autograd::new_node("LinearBackward0", {input, weight, bias},
                                 [](FunctionNode& n, const variable_list& g) -> variable_list {
                                   variable_list r(3);
                                   if (!g[0].defined()) return r;
                                   Tensor x = n.saved(0), w = n.saved(1);
                                   const int64_t out_features = w.size(0), in_features = w.size(1);
                                   Tensor g2 = ember::reshape(g[0], {-1, out_features});
                                   if (n.should_compute_output(0)) {
                                     r[0] = ember::view(ember::mm(g2, ember::conj(w)), n.shapes[0]);
                                   }
                                   if (n.should_compute_output(1)) {
                                     Tensor x2 = ember::reshape(x, {-1, in_features});
                                     r[1] = ember::mm(ember::transpose(g2, 0, 1), ember::conj(x2));
                                   }
                                   if (n.should_compute_output(2))
                                     r[2] = ember::sum(g2, std::vector<int64_t>{0});
                                   return r;
                                 });
  node->save(node->should_compute_output(1) ? input : Tensor());
  node->save(node->should_compute_output(0) || node->should_compute_output(1) ? weight : Tensor());
  node->shapes.push_back(DimVector(input.sizes()));
  if (node->has_forward()) {
    // Bilinear in (input, weight) plus the bias: linear(dx, w) + linear(x, dw) + db.
    node->set_jvp([](FunctionNode& n, const variable_list& t) -> variable_list {
      Tensor r;
      if (t[0].defined()) r = ember::linear(t[0], n.saved(1), Tensor());
      if (t[1].defined()) r = jvp::add(r, ember::linear(n.saved(0), t[1], Tensor()));
      return {jvp::add(r, t[2])};
    });
  }
  return autograd::record(node, {input, weight, bias}, Tensor(), "linear",
                          [&] { return native::linear(input, weight, bias); });
}

}  // namespace derivatives
}  // namespace ember
