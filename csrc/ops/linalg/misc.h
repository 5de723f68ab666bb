// ember.linalg's matrix_exp (its own kernel). The other functions of the family's api header
// api/linalg/misc.h (vector_norm, cross, vecdot, vander, multi_dot, matrix_power, tensorinv,
// tensorsolve) are composites of public ops, defined in the api layer.
#pragma once
#include "core/tensor.h"
#include "dispatch/stub.h"
#include "kernels/linalg/misc_stubs.h"

namespace ember {
namespace native {

// linalg.matrix_exp(A): scaling and squaring with the optimized Taylor polynomials of degree
// 1, 2, 4, 8, 12 and 18 of Bader, Blanes and Casas (2019), as PyTorch.
Tensor linalg_matrix_exp(const Tensor& A);
// matrix_exp's argument checks (also run by the api layer before it records a call).
void check_matrix_exp_args(const Tensor& A);

// The kernel stub, matrix_exp_stub, is in kernels/linalg/misc_stubs.h.

}  // namespace native
}  // namespace ember
