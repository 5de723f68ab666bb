// Definitions of the linalg solve family's kernel stubs (declared in
// kernels/linalg/solve_stubs.h).
#include "kernels/linalg/solve_stubs.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(lu_factor_stub, LuFactorFn);
EMBER_DEFINE_STUB(lu_solve_stub, LuSolveFn);
EMBER_DEFINE_STUB(lu_inverse_stub, LuInverseFn);
EMBER_DEFINE_STUB(lu_det_stub, LuDetFn);
EMBER_DEFINE_STUB(lu_slogdet_stub, LuSlogdetFn);
EMBER_DEFINE_STUB(lu_permutation_stub, LuPermutationFn);
EMBER_DEFINE_STUB(cholesky_stub, CholeskyFn);
EMBER_DEFINE_STUB(triangular_solve_stub, TriangularSolveFn);
EMBER_DEFINE_STUB(ldl_factor_stub, LdlFactorFn);
EMBER_DEFINE_STUB(ldl_solve_stub, LdlSolveFn);

}  // namespace native
}  // namespace ember
