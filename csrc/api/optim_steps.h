// Public ops of ops/optim_steps.h that have no node of their own (the native functions).
#pragma once
#include "ops/optim_steps.h"

namespace ember {

namespace optim {
using native::optim::adadelta_step;
using native::optim::AdadeltaCoeffs;
using native::optim::AdadeltaKernelFn;
using native::optim::AdadeltaOptions;
using native::optim::adagrad_step;
using native::optim::AdagradCoeffs;
using native::optim::AdagradKernelFn;
using native::optim::AdagradOptions;
using native::optim::adam_step;
using native::optim::adamax_step;
using native::optim::AdamaxCoeffs;
using native::optim::AdamaxKernelFn;
using native::optim::AdamaxOptions;
using native::optim::AdamCoeffs;
using native::optim::AdamKernelFn;
using native::optim::AdamOptions;
using native::optim::nadam_step;
using native::optim::NadamCoeffs;
using native::optim::NadamKernelFn;
using native::optim::NadamOptions;
using native::optim::OptimSlot;
using native::optim::radam_step;
using native::optim::RadamCoeffs;
using native::optim::RadamKernelFn;
using native::optim::RadamOptions;
using native::optim::rmsprop_step;
using native::optim::RmspropCoeffs;
using native::optim::RmspropKernelFn;
using native::optim::RmspropOptions;
using native::optim::sgd_step;
using native::optim::SgdCoeffs;
using native::optim::SgdKernelFn;
using native::optim::SgdOptions;
}  // namespace optim

}  // namespace ember
