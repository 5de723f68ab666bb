// Public ops of ops/linalg_solve.h that have no node of their own (the native functions).
#pragma once
#include "ops/linalg_solve.h"

namespace ember {

using native::TensorPair;
using native::TensorTriple;
using native::linalg_cholesky;
using native::linalg_cholesky_ex;
using native::cholesky_solve;
using native::cholesky_inverse;
using native::linalg_inv;
using native::linalg_inv_ex;
using native::linalg_solve;
using native::linalg_solve_ex;
using native::linalg_det;
using native::linalg_slogdet;
using native::logdet;
using native::linalg_solve_triangular;
using native::triangular_solve;
using native::linalg_lu_factor;
using native::linalg_lu_factor_ex;
using native::linalg_lu;
using native::linalg_lu_solve;
using native::lu_unpack;
using native::linalg_ldl_factor;
using native::linalg_ldl_factor_ex;
using native::linalg_ldl_solve;
namespace linalg {
using native::linalg::batch_shape;
using native::linalg::with_dims;
using native::linalg::empty_int32;
using native::linalg::check_out;
using native::linalg::expand_batch;
using native::linalg::op_on_transpose;
using native::linalg::work_leading_dim;
using native::linalg::empty_work;
using native::linalg::work_copy;
using native::linalg::unpadded;
using native::linalg::column_major;
using native::linalg::triangular_solve_batch;
using native::linalg::triangular_solve_matrices;
using native::linalg::LuFactors;
using native::linalg::lu_factor_square;
using native::linalg::lu_solve_inplace;
using native::linalg::lu_solve_matrices;
using native::linalg::det_with_factors;
using native::linalg::slogdet_with_factors;
using native::linalg::SolveResult;
using native::linalg::solve_with_factors;
using native::linalg::solve_is_vector_rhs;
}  // namespace linalg

}  // namespace ember
