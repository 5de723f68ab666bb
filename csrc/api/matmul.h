// Public ops of ops/matmul.h that have no node of their own (the native functions).
#pragma once
#include "ops/matmul.h"

namespace ember {

using native::matmul;
using native::mm;
using native::bmm;
using native::mv;
using native::dot;
using native::vdot;
using native::inner;
using native::outer;
using native::addmm;
using native::addmv;
using native::addbmm;
using native::baddbmm;
using native::tensordot;
using native::kron;
using native::einsum;
using native::cross;
using native::cdist;
using native::cdist_backward;

}  // namespace ember
