"""ember.special: torch.special's functions (float32/float64, and float16/bfloat16 where PyTorch
computes them), with PyTorch's gradients.

The functions new to Ember are C++ bindings (ember._C._special: docs/design/special.md); the rest
are the existing top-level ops under torch.special's names (erf, gammaln = lgamma, expit =
sigmoid, multigammaln = mvlgamma, gammainc = igamma, ...).
"""

import ember as _ember

from .. import _C
from .._C import _special as _impl

__all__ = [
    "airy_ai",
    "bessel_j0",
    "bessel_j1",
    "bessel_y0",
    "bessel_y1",
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "exp2",
    "expit",
    "expm1",
    "gammainc",
    "gammaincc",
    "gammaln",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
    "log1p",
    "log_ndtr",
    "log_softmax",
    "logit",
    "logsumexp",
    "modified_bessel_i0",
    "modified_bessel_i1",
    "modified_bessel_k0",
    "modified_bessel_k1",
    "multigammaln",
    "ndtr",
    "ndtri",
    "polygamma",
    "psi",
    "round",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "sinc",
    "softmax",
    "spherical_bessel_j0",
    "xlog1py",
    "xlogy",
    "zeta",
]

# Implemented in ember._C._special.
airy_ai = _impl.airy_ai
bessel_j0 = _impl.bessel_j0
bessel_j1 = _impl.bessel_j1
bessel_y0 = _impl.bessel_y0
bessel_y1 = _impl.bessel_y1
chebyshev_polynomial_t = _impl.chebyshev_polynomial_t
chebyshev_polynomial_u = _impl.chebyshev_polynomial_u
chebyshev_polynomial_v = _impl.chebyshev_polynomial_v
chebyshev_polynomial_w = _impl.chebyshev_polynomial_w
entr = _impl.entr
erfcx = _impl.erfcx
gammainc = _impl.gammainc
gammaincc = _impl.gammaincc
hermite_polynomial_h = _impl.hermite_polynomial_h
hermite_polynomial_he = _impl.hermite_polynomial_he
i0e = _impl.i0e
i1 = _impl.i1
i1e = _impl.i1e
laguerre_polynomial_l = _impl.laguerre_polynomial_l
legendre_polynomial_p = _impl.legendre_polynomial_p
log_ndtr = _impl.log_ndtr
modified_bessel_i0 = _impl.modified_bessel_i0
modified_bessel_i1 = _impl.modified_bessel_i1
modified_bessel_k0 = _impl.modified_bessel_k0
modified_bessel_k1 = _impl.modified_bessel_k1
multigammaln = _impl.multigammaln
ndtr = _impl.ndtr
ndtri = _impl.ndtri
scaled_modified_bessel_k0 = _impl.scaled_modified_bessel_k0
scaled_modified_bessel_k1 = _impl.scaled_modified_bessel_k1
shifted_chebyshev_polynomial_t = _impl.shifted_chebyshev_polynomial_t
shifted_chebyshev_polynomial_u = _impl.shifted_chebyshev_polynomial_u
shifted_chebyshev_polynomial_v = _impl.shifted_chebyshev_polynomial_v
shifted_chebyshev_polynomial_w = _impl.shifted_chebyshev_polynomial_w
spherical_bessel_j0 = _impl.spherical_bessel_j0
xlog1py = _impl.xlog1py
zeta = _impl.zeta

# The top-level ops under torch.special's names.
digamma = psi = _C.digamma
erf = _C.erf
erfc = _C.erfc
erfinv = _C.erfinv
exp2 = _C.exp2
expit = _C.sigmoid
expm1 = _C.expm1
gammaln = _C.lgamma
i0 = _C.i0
log1p = _C.log1p
logit = _C.logit
polygamma = _C.polygamma
sinc = _C.sinc
xlogy = _C.xlogy


def round(input, *, decimals=0, out=None):  # noqa: A001  (torch.special.round)
    """Rounds to the given number of decimals (ties to even), as ember.round."""
    return _C.round(input, decimals=decimals, out=out)


def softmax(input, dim, *, dtype=None):
    """softmax along dim (torch.special.softmax: dim is required)."""
    return _C.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """log_softmax along dim (torch.special.log_softmax: dim is required)."""
    return _C.log_softmax(input, dim, dtype=dtype)


def logsumexp(input, dim, keepdim=False, *, out=None):
    """log(sum(exp(input))) along dim, computed stably."""
    return _C.logsumexp(input, dim, keepdim, out=out)


# mvlgamma's cost is proportional to p (the fuzzer found it taking seconds per element on
# inputs outside its domain): PyTorch's own domain check runs first, and the C++ op refuses a p
# that would take minutes (ops/special.cpp). (Laguerre's large degrees are refused in its kernel.)
_mvlgamma_impl = _ember.mvlgamma


def _check_mvlgamma(input, p):
    if isinstance(p, _ember.Tensor) and p.dim() == 0 and not p.is_floating_point():
        p = int(p)  # a 0-d integer tensor binds to the int p
    if isinstance(input, _ember.Tensor) and isinstance(p, int) and input.numel() and p > 1:
        # Past the C++ op's cap on p (ops/special.cpp) its error, which names p and the cap,
        # is the one raised, before any comparison is computed.
        if p > 1 << 26:
            return
        if not bool((input > 0.5 * (p - 1)).all()):
            raise RuntimeError("[mvlgamma] All elements must be greater than (p-1)/2")


def _mvlgamma(input, p, *, out=None):
    _check_mvlgamma(input, p)
    return _mvlgamma_impl(input, p) if out is None else _mvlgamma_impl(input, p, out=out)


_ember.mvlgamma = _mvlgamma
multigammaln = _mvlgamma
_tensor_mvlgamma = _ember.Tensor.mvlgamma


def _tensor_mvlgamma_checked(self, p):
    _check_mvlgamma(self, p)
    return _tensor_mvlgamma(self, p)


_ember.Tensor.mvlgamma = _tensor_mvlgamma_checked
_tensor_mvlgamma_ = _ember.Tensor.mvlgamma_


def _tensor_mvlgamma_checked_(self, p):
    _check_mvlgamma(self, p)
    return _tensor_mvlgamma_(self, p)


_ember.Tensor.mvlgamma_ = _tensor_mvlgamma_checked_
