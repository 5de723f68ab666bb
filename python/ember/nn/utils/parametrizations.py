"""``ember.nn.utils.parametrizations``: weight_norm, spectral_norm and orthogonal written as
parametrizations (``ember.nn.utils.parametrize``), with PyTorch 2.x's arguments, buffers and
state_dict keys. All three are built from public differentiable ops, so gradients (and double
gradients) flow through them."""

from __future__ import annotations

from enum import Enum, auto

import ember
import ember.nn.functional as F
from ember import Tensor
from ember.nn.modules import conv as _conv
from ember.nn.modules.module import Module
from ember.nn.utils import parametrize
from ember.nn.utils.weight_norm import _weight_norm, norm_except_dim


def _conv_transpose_classes() -> tuple:
    # The output dim of a transposed convolution's weight is 1 (weight is in x out x k...).
    return tuple(
        getattr(_conv, n)
        for n in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")
        if hasattr(_conv, n)
    )


__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


# ---------------------------------------------------------------------------- orthogonal


def _is_orthogonal(q: Tensor) -> bool:
    n, k = q.size(-2), q.size(-1)
    eye = ember.eye(k, dtype=q.dtype)
    # A tolerance that grows with the size, as the rounding of Q^H Q does.
    eps = 10.0 * n * ember.finfo(q.dtype).eps
    return ember.allclose(q.mH @ q, eye, atol=eps)


def _make_orthogonal(a: Tensor) -> Tensor:
    """The Q of A = QR (A tall) with diag(R) real and non-negative, so Q is unique."""
    x, tau = ember.geqrf(a)
    q = ember.linalg.householder_product(x, tau)
    # diag(X) is diag(R): multiplying the columns by its signs makes diag(R) positive.
    return q * x.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    """X -> an orthogonal (unitary) matrix of X's shape: exp or Cayley transform of the
    skew-symmetric matrix made from X's lower triangle, or the product of the Householder
    reflections stored below X's diagonal. With use_trivialization the result is multiplied
    by ``base``, an orthogonal matrix that assigning to the weight sets (so any orthogonal
    matrix can be assigned, and the map is used around it)."""

    base: Tensor

    def __init__(self, weight, orthogonal_map: _OrthMaps, *, use_trivialization=True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x: Tensor) -> Tensor:
        n, k = x.size(-2), x.size(-1)
        transposed = n < k
        if transposed:
            x = x.mT
            n, k = k, n
        # x is tall (n >= k) from here on.
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            x = x.tril()
            if n != k:
                # Pad with zero columns to a square matrix; its first k columns are the result.
                x = ember.cat([x, x.new_zeros(n, n - k).expand(*x.shape[:-2], -1, -1)], dim=-1)
            a = x - x.mH  # skew-symmetric (skew-Hermitian)
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                q = ember.matrix_exp(a)
            else:
                # Cayley: (I - A/2)^{-1} (I + A/2), orthogonal for skew-symmetric A.
                eye = ember.eye(n, dtype=a.dtype)
                q = ember.linalg.solve(ember.add(eye, a, alpha=-0.5), ember.add(eye, a, alpha=0.5))
            if n != k:
                q = q[..., :k]
        else:
            # Householder (real only): the reflectors are below the diagonal; the diagonal of x
            # holds the signs +-1 of diag(R), which are kept out of the gradient (int cast).
            a = x.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (a * a).sum(dim=-2))
            q = ember.linalg.householder_product(a, tau)
            q = q * x.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)

        if hasattr(self, "base"):
            q = self.base @ q
        if transposed:
            q = q.mT
        return q

    @ember.no_grad()
    def right_inverse(self, q: Tensor) -> Tensor:
        if q.shape != self.shape:
            raise ValueError(
                f"Expected a matrix or batch of matrices of shape {self.shape}. "
                f"Got a tensor of shape {q.shape}."
            )
        q_init = q
        n, k = q.size(-2), q.size(-1)
        transpose = n < k
        if transpose:
            q = q.mT
            n, k = k, n

        if not hasattr(self, "base"):
            # Without the trivialization only the Householder map can be inverted (by a QR
            # decomposition); X with exp(X - X^H)[:, :k] == Q has no closed form.
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential or the Cayley "
                    "parametrizations when use_trivialization=False."
                )
            a, tau = ember.geqrf(q)
            # Keep diag(R) > 0: store the signs on the diagonal (forward multiplies by them);
            # a reflector LAPACK skipped (tau == 0) flips its sign.
            diag = a.diagonal(dim1=-2, dim2=-1)
            signs = diag.sign()
            signs = ember.where(tau == 0.0, -signs, signs)
            diag.copy_(signs)
            return a.mT if transpose else a

        if n == k:
            q = _make_orthogonal(q) if not _is_orthogonal(q) else q.clone()
        else:
            # Complete the k orthonormal columns to an n x n orthogonal matrix.
            extra = ember.randn(*(q.size()[:-2] + (n, n - k)), dtype=q.dtype)
            q = _make_orthogonal(ember.cat([q, extra], dim=-1))
        self.base = q
        # -I maps to I under every map (Householder reads the -1 diagonal as the signs), so the
        # parametrized weight is base @ I = the assigned matrix.
        neg_id = ember.zeros_like(q_init)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id


def orthogonal(
    module: Module,
    name: str = "weight",
    orthogonal_map: str | None = None,
    *,
    use_trivialization: bool = True,
) -> Module:
    """Constrain ``module.<name>`` (a matrix, or a batch of them) to be orthogonal (unitary),
    through ``orthogonal_map``: "matrix_exp" (default for square or complex), "cayley", or
    "householder" (default for non-square real). The weight's current value is kept (it is
    first made orthogonal by a QR decomposition if it is not)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(
            "Expected a matrix or batch of matrices. "
            f"Got a tensor of {weight.ndim} dimensions."
        )
    if orthogonal_map is None:
        orthogonal_map = (
            "matrix_exp"
            if weight.size(-2) == weight.size(-1) or weight.is_complex()
            else "householder"
        )
    orth_enum = None
    if isinstance(orthogonal_map, str):
        orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
            f"Got: {orthogonal_map}"
        )
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


# ---------------------------------------------------------------------------- weight_norm


class _WeightNorm(Module):
    """(g, v) -> g * v / ||v||, the norm taken over every dim but ``dim`` (the whole tensor
    when dim is None / -1, as in PyTorch)."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor):
        weight_g = norm_except_dim(weight, 2, self.dim)
        weight_v = weight
        return weight_g, weight_v


def _make_weight_norm_compat_hook(name: str):
    # Checkpoints saved with the old hook-based weight_norm have <name>_g / <name>_v; they load
    # into parametrizations.<name>.original0 / original1.
    def hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
             error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    return hook


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as g * v / ||v|| (magnitude g, direction v), stored as
    ``parametrizations.<name>.original0`` (g) and ``original1`` (v). ``dim`` is the dim kept
    by the norm (one g per slice along it); ``dim=None`` uses one norm for the whole tensor."""
    _weight_norm_module = _WeightNorm(dim)
    parametrize.register_parametrization(module, name, _weight_norm_module, unsafe=True)
    module._register_load_state_dict_pre_hook(_make_weight_norm_compat_hook(name))
    return module


# ---------------------------------------------------------------------------- spectral_norm


class _SpectralNorm(Module):
    """W -> W / sigma(W), sigma the largest singular value of W seen as a matrix (``dim`` first,
    the other dims flattened), estimated by power iteration on the buffers ``_u`` and ``_v``.
    Each forward in training mode refines u and v by ``n_power_iterations`` steps (in place,
    without gradient); in eval mode they stay as they are. A 1-d W is divided by its norm."""

    def __init__(
        self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                "Dimension out of range (expected to be in range of "
                f"[-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but "
                f"got n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight.detach())
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            # Start from a good estimate, so the first forward's sigma is already close.
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    @ember.no_grad()
    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        # u and v are updated in place: a module replica (DataParallel) or a saved reference
        # sees the same buffers.
        for _ in range(n_power_iterations):
            self._u.copy_(F.normalize(ember.mv(weight_mat, self._v), dim=0, eps=self.eps))
            self._v.copy_(F.normalize(ember.mv(weight_mat.mH, self._u), dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat.detach(), self.n_power_iterations)
        # Clones: the gradient must not see the next in-place update of the buffers.
        u = self._u.clone()
        v = self._v.clone()
        sigma = ember.vdot(u, ember.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        # Any W is its own preimage up to scale; storing W itself is what PyTorch does.
        return value


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Divide ``module.<name>`` by its spectral norm (largest singular value), estimated by
    ``n_power_iterations`` power-iteration steps per training forward. ``dim`` is the output
    dim (default 0, 1 for ConvTranspose). The vectors are the buffers
    ``parametrizations.<name>.0._u`` and ``._v``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, _conv_transpose_classes()) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module
