// Public ops of ops/linalg_misc.h that have no node of their own (the native functions).
#pragma once
#include "ops/linalg_misc.h"

namespace ember {

using native::linalg_vector_norm;
using native::linalg_cross;
using native::linalg_vecdot;
using native::linalg_vander;
using native::linalg_multi_dot;
using native::linalg_matrix_power;
using native::linalg_tensorinv;
using native::linalg_tensorsolve;
using native::linalg_matrix_exp;
using native::MatrixExpFn;

}  // namespace ember
