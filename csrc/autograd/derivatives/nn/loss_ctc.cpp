// Derivative of the raw CTC loss (per-sample negative log-likelihoods). The gradient is
// PyTorch's (see nn_loss_ctc.h); like PyTorch's, it is not differentiable again: with
// create_graph=True it is computed the same way, as a constant of the graph.
#include "api/nn/loss_ctc.h"
#include "autograd/derivatives/nn/loss.h"
#include "autograd/record.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

Tensor ctc_loss_raw(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                    IntArrayRef target_lengths, int64_t blank, bool zero_infinity) {
  auto saved = std::make_shared<CtcResult>();
  DimVector il(input_lengths), tl(target_lengths);
  auto node = autograd::new_node(
      "CtcLossBackward0", {log_probs},
      [saved, il, tl, blank, zero_infinity](FunctionNode& n, const variable_list& g) {
        if (!g[0].defined()) return variable_list(1);
        CtcResult r = *saved;
        r.nll = n.saved(1);
        r.log_alpha = n.saved(2);
        autograd::NoGradGuard no_grad;
        return variable_list{ctc_loss_backward(g[0], n.saved(0), r, il, tl, blank, zero_infinity)};
      });
  node->save(log_probs);
  Tensor out = autograd::record(node, {log_probs}, Tensor(), "ctc_loss", [&] {
    *saved = ctc_loss_forward(log_probs, targets, input_lengths, target_lengths, blank);
    return saved->nll;
  });
  node->save(saved->nll, /*is_output=*/true);
  node->save(saved->log_alpha);
  // The node keeps the target layout; the tensors live in its saved variables.
  saved->nll = Tensor();
  saved->log_alpha = Tensor();
  return out;
}

}  // namespace derivatives
}  // namespace ember
