// Optimizer steps (ember.optim): one call updates every parameter of a parameter group in place.
// See Note [Fused Optimizer Steps] in optim_steps.cpp.
//
// Each step function takes the group's parameters, their gradients and the per-parameter state
// tensors (lists of equal length, in parameter order), plus the group's hyperparameters. The
// formulas are PyTorch's single-tensor ("for-loop") implementations, element by element, so a
// run follows torch.optim's trajectory. `steps` holds each parameter's 0-d step counter
// (float32, or float64 under a float64 default dtype): it is incremented in place as in PyTorch.
// Nothing here records gradient history.
#pragma once
#include <vector>

#include "core/tensor.h"
#include "dispatch/stub.h"
#include "kernels/optim_stubs.h"

namespace ember {
namespace native {
namespace optim {

// --- Hyperparameters of one group (the Python optimizer's param_group entries) ---
struct SgdOptions {
  double lr = 1e-3, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false, maximize = false;
};
struct AdamOptions {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool amsgrad = false, maximize = false, decoupled_weight_decay = false;
};
struct RmspropOptions {
  double lr = 1e-2, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0;
  bool centered = false, maximize = false;
};
struct AdagradOptions {
  double lr = 1e-2, lr_decay = 0, weight_decay = 0, eps = 1e-10;
  bool maximize = false;
};
struct AdadeltaOptions {
  double lr = 1.0, rho = 0.9, eps = 1e-6, weight_decay = 0;
  bool maximize = false;
};
struct AdamaxOptions {
  double lr = 2e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool maximize = false;
};
struct NadamOptions {
  double lr = 2e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0, momentum_decay = 4e-3;
  bool decoupled_weight_decay = false, maximize = false;
};
struct RadamOptions {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool decoupled_weight_decay = false, maximize = false;
};

// --- Public step functions (one call per parameter group) ---

// Returns the momentum buffers: the given ones, with a new buffer (the first step's gradient)
// wherever the input was undefined. With momentum == 0, `momentum_buffers` may be empty.
std::vector<Tensor> sgd_step(const TensorList& params, const TensorList& grads,
                             const TensorList& momentum_buffers, const SgdOptions& o);
// max_exp_avg_sqs is used (and required) only with amsgrad.
void adam_step(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
               const TensorList& exp_avg_sqs, const TensorList& max_exp_avg_sqs,
               const TensorList& steps, const AdamOptions& o);
// grad_avgs only when centered, momentum_buffers only when momentum > 0.
void rmsprop_step(const TensorList& params, const TensorList& grads, const TensorList& square_avgs,
                  const TensorList& grad_avgs, const TensorList& momentum_buffers,
                  const TensorList& steps, const RmspropOptions& o);
void adagrad_step(const TensorList& params, const TensorList& grads, const TensorList& state_sums,
                  const TensorList& steps, const AdagradOptions& o);
void adadelta_step(const TensorList& params, const TensorList& grads, const TensorList& square_avgs,
                   const TensorList& acc_deltas, const TensorList& steps, const AdadeltaOptions& o);
void adamax_step(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                 const TensorList& exp_infs, const TensorList& steps, const AdamaxOptions& o);
// mu_products: each parameter's 0-d running product of the momentum schedule (updated in place).
void nadam_step(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                const TensorList& exp_avg_sqs, const TensorList& mu_products,
                const TensorList& steps, const NadamOptions& o);
void radam_step(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                const TensorList& exp_avg_sqs, const TensorList& steps, const RadamOptions& o);

// The kernel stubs, OptimSlot and the per-step coefficients are in kernels/optim_stubs.h.

}  // namespace optim
}  // namespace native
}  // namespace ember
