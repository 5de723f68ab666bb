// Kernel stubs of ember.special (ops/special.cpp defines them; kernels/cpu/special_*_kernels.cpp
// register the kernels). One stub per kernel file, selected by SpecialOp, keeps the family's
// dozens of functions from needing dozens of stubs.
#pragma once
#include <cstdint>

#include "dispatch/stub.h"
#include "kernels/elementwise_stubs.h"  // IterFn

namespace ember {
namespace native {

enum class SpecialOp : int {
  // Bessel and Airy functions of one argument (special_bessel_stub).
  i0,
  i0e,
  i1,
  i1e,
  bessel_j0,
  bessel_j1,
  bessel_y0,
  bessel_y1,
  modified_bessel_k0,
  modified_bessel_k1,
  scaled_modified_bessel_k0,
  scaled_modified_bessel_k1,
  spherical_bessel_j0,
  airy_ai,
  // Normal distribution and error-function relatives (special_erf_stub).
  ndtr,
  ndtri,
  log_ndtr,
  erfcx,
  entr,
  // Functions of two arguments (special_binary_stub).
  igamma,
  igammac,
  xlog1py,
  zeta,
  // Orthogonal polynomials p_n(x), n a tensor truncated to an integer (special_poly_stub).
  chebyshev_polynomial_t,
  chebyshev_polynomial_u,
  chebyshev_polynomial_v,
  chebyshev_polynomial_w,
  shifted_chebyshev_polynomial_t,
  shifted_chebyshev_polynomial_u,
  shifted_chebyshev_polynomial_v,
  shifted_chebyshev_polynomial_w,
  hermite_polynomial_h,
  hermite_polynomial_he,
  laguerre_polynomial_l,
  legendre_polynomial_p,
};

// out = f(x) (unary) or f(a, b) (binary); `name` is the public op's, for dtype errors.
using SpecialFn = void (*)(TensorIterator& iter, SpecialOp op, const char* name);
EMBER_DECLARE_STUB(special_bessel_stub, SpecialFn);
EMBER_DECLARE_STUB(special_erf_stub, SpecialFn);
EMBER_DECLARE_STUB(special_binary_stub, SpecialFn);
EMBER_DECLARE_STUB(special_poly_stub, SpecialFn);

// mvlgamma(x, p) = sum_{j < p} lgamma(x - j / 2) + p (p - 1) / 4 log(pi).
using MvlgammaFn = void (*)(TensorIterator& iter, int64_t p);
EMBER_DECLARE_STUB(mvlgamma_stub, MvlgammaFn);

}  // namespace native
}  // namespace ember
