// Kernel stubs of the fused optimizer steps (ops/optim_steps.h includes this header; the steps
// are ops/optim_steps.cpp, the kernels kernels/cpu/optim_kernels.cpp): one kernel call updates
// one parameter and its state tensors in place.
#pragma once
#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {
namespace optim {

// One parameter's tensors, all contiguous, of one real floating dtype and the same numel
// (complex parameters arrive as their real views). Unused state slots are undefined.
struct OptimSlot {
  Tensor param, grad;
  Tensor state[3];
};

// The per-parameter coefficients a kernel needs: the group's options plus the scalars that
// depend on the parameter's step count, computed once (in double, as PyTorch's Python code does).
struct SgdCoeffs {
  double lr, momentum, dampening, weight_decay;
  bool nesterov, maximize, init_buffer;  // init_buffer: state[0] is new, set it to the gradient
};
struct AdamCoeffs {
  double lr, beta1, beta2, eps, weight_decay, step_size, bias_correction2_sqrt;
  bool amsgrad, maximize, decoupled_weight_decay;
};
struct RmspropCoeffs {
  double lr, alpha, eps, weight_decay, momentum;
  bool centered, maximize;
};
struct AdagradCoeffs {
  double clr, eps, weight_decay;
  bool maximize;
};
struct AdadeltaCoeffs {
  double lr, rho, eps, weight_decay;
  bool maximize;
};
struct AdamaxCoeffs {
  double beta1, beta2, eps, weight_decay, clr;
  bool maximize;
};
struct NadamCoeffs {
  double lr, beta1, beta2, eps, weight_decay, bias_correction2, grad_coeff, exp_avg_coeff;
  bool decoupled_weight_decay, maximize;
};
struct RadamCoeffs {
  double lr, beta1, beta2, eps, weight_decay, bias_correction1, bias_correction2_sqrt, rect;
  bool rectify, decoupled_weight_decay, maximize;
};

using SgdKernelFn = void (*)(const OptimSlot&, const SgdCoeffs&);
using AdamKernelFn = void (*)(const OptimSlot&, const AdamCoeffs&);
using RmspropKernelFn = void (*)(const OptimSlot&, const RmspropCoeffs&);
using AdagradKernelFn = void (*)(const OptimSlot&, const AdagradCoeffs&);
using AdadeltaKernelFn = void (*)(const OptimSlot&, const AdadeltaCoeffs&);
using AdamaxKernelFn = void (*)(const OptimSlot&, const AdamaxCoeffs&);
using NadamKernelFn = void (*)(const OptimSlot&, const NadamCoeffs&);
using RadamKernelFn = void (*)(const OptimSlot&, const RadamCoeffs&);

EMBER_DECLARE_STUB(sgd_step_stub, SgdKernelFn);
EMBER_DECLARE_STUB(adam_step_stub, AdamKernelFn);
EMBER_DECLARE_STUB(rmsprop_step_stub, RmspropKernelFn);
EMBER_DECLARE_STUB(adagrad_step_stub, AdagradKernelFn);
EMBER_DECLARE_STUB(adadelta_step_stub, AdadeltaKernelFn);
EMBER_DECLARE_STUB(adamax_step_stub, AdamaxKernelFn);
EMBER_DECLARE_STUB(nadam_step_stub, NadamKernelFn);
EMBER_DECLARE_STUB(radam_step_stub, RadamKernelFn);

}  // namespace optim
}  // namespace native
}  // namespace ember
