// Public ops of ops/optim_steps.h that have no node of their own (the native functions).
#pragma once
#include "ops/optim_steps.h"

namespace ember {

namespace optim {
using native::optim::SgdOptions;
using native::optim::AdamOptions;
using native::optim::RmspropOptions;
using native::optim::AdagradOptions;
using native::optim::AdadeltaOptions;
using native::optim::AdamaxOptions;
using native::optim::NadamOptions;
using native::optim::RadamOptions;
using native::optim::sgd_step;
using native::optim::adam_step;
using native::optim::rmsprop_step;
using native::optim::adagrad_step;
using native::optim::adadelta_step;
using native::optim::adamax_step;
using native::optim::nadam_step;
using native::optim::radam_step;
using native::optim::OptimSlot;
using native::optim::SgdCoeffs;
using native::optim::AdamCoeffs;
using native::optim::RmspropCoeffs;
using native::optim::AdagradCoeffs;
using native::optim::AdadeltaCoeffs;
using native::optim::AdamaxCoeffs;
using native::optim::NadamCoeffs;
using native::optim::RadamCoeffs;
using native::optim::SgdKernelFn;
using native::optim::AdamKernelFn;
using native::optim::RmspropKernelFn;
using native::optim::AdagradKernelFn;
using native::optim::AdadeltaKernelFn;
using native::optim::AdamaxKernelFn;
using native::optim::NadamKernelFn;
using native::optim::RadamKernelFn;
}  // namespace optim

}  // namespace ember
