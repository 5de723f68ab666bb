"""CPU autocast (ember.autocast / ember.amp.autocast / ember.cpu.amp.autocast), as PyTorch 2.x
does it: the output dtype of every op on autocast's lists (cast down to bfloat16 / float16, up
to float32, or promoted to a common type) and of ops on no list (their inputs' dtype), the
Python losses and their gradients, the recurrent cells and layers (PyTorch's composites of
linear), float64 and out= left alone, nesting and enabled=False, the decorator form, the state
restored after exceptions, thread-locality, the weight cache, gradients reaching float32 leaves
in float32, a small training step, the state functions (ember.set_autocast_enabled & co.),
ember.cuda.amp.autocast without CUDA, and the same dtypes as torch.autocast("cpu") when torch is
importable (the parity tests only)."""

import threading
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import ember
import ember.nn.functional as F

LOWP = ["bfloat16", "float16"]


# ---- inputs, shared by the Ember tests and the torch parity tests -------------------------------


def data(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def T(lib, dt, *shape, seed=0):
    """A tensor of `lib` with standard-normal values, converted to dtype `dt`."""
    return lib.tensor(data(*shape, seed=seed)).to(dt)


def SPD(lib, dt, n=3, seed=0):
    """A well-conditioned symmetric positive definite matrix."""
    a = data(n, n, seed=seed)
    return lib.tensor(a @ a.T + n * np.eye(n, dtype=np.float32)).to(dt)


def P(lib, dt, *shape, seed=0):
    """Probabilities in (0, 1)."""
    return lib.tensor(1.0 / (1.0 + np.exp(-data(*shape, seed=seed)))).to(dt)


def labels(lib, *values):
    return lib.tensor(np.array(values, dtype=np.int64))


@dataclass
class Case:
    name: str
    run: Callable  # run(lib, dt) -> output tensor (inputs made in dtype dt)
    torch: bool = True  # False: torch has no such function (or removed it)
    lowp_inputs: bool = True  # False: the op refuses float16 / bfloat16 inputs (as in torch)

    def __str__(self):
        return self.name


def conv_w(lib, dt, *shape):
    return T(lib, dt, *shape, seed=5) * 0.5


# Ops that autocast runs in the lower-precision dtype: floating inputs are cast down.
LOWER = [
    Case("mm", lambda m, d: m.mm(T(m, d, 2, 3), T(m, d, 3, 4, seed=1))),
    Case("Tensor.mm", lambda m, d: T(m, d, 2, 3).mm(T(m, d, 3, 4, seed=1))),
    Case("bmm", lambda m, d: m.bmm(T(m, d, 2, 2, 3), T(m, d, 2, 3, 4, seed=1))),
    Case("matmul", lambda m, d: m.matmul(T(m, d, 2, 3), T(m, d, 3, 4, seed=1))),
    Case("matmul_1d_1d", lambda m, d: m.matmul(T(m, d, 3), T(m, d, 3, seed=1))),
    Case("matmul_2d_1d", lambda m, d: m.matmul(T(m, d, 2, 3), T(m, d, 3, seed=1))),
    Case("matmul_3d_2d", lambda m, d: m.matmul(T(m, d, 2, 2, 3), T(m, d, 3, 4, seed=1))),
    Case("matmul_operator", lambda m, d: T(m, d, 2, 3) @ T(m, d, 3, 4, seed=1)),
    Case("Tensor.matmul", lambda m, d: T(m, d, 2, 3).matmul(T(m, d, 3, 4, seed=1))),
    Case("addmm", lambda m, d: m.addmm(T(m, d, 2, 4), T(m, d, 2, 3, seed=1),
                                       T(m, d, 3, 4, seed=2))),
    Case("Tensor.addmm", lambda m, d: T(m, d, 2, 4).addmm(T(m, d, 2, 3, seed=1),
                                                          T(m, d, 3, 4, seed=2))),
    Case("addbmm", lambda m, d: m.addbmm(T(m, d, 2, 4), T(m, d, 2, 2, 3, seed=1),
                                         T(m, d, 2, 3, 4, seed=2))),
    Case("baddbmm", lambda m, d: m.baddbmm(T(m, d, 2, 2, 4), T(m, d, 2, 2, 3, seed=1),
                                           T(m, d, 2, 3, 4, seed=2))),
    Case("linear", lambda m, d: m.nn.functional.linear(T(m, d, 2, 3), T(m, d, 4, 3, seed=1),
                                                       T(m, d, 4, seed=2))),
    Case("linear_no_bias", lambda m, d: m.nn.functional.linear(T(m, d, 2, 5, 3),
                                                               T(m, d, 4, 3, seed=1))),
    Case("linear_weight_vector", lambda m, d: m.nn.functional.linear(T(m, d, 2, 3),
                                                                     T(m, d, 3, seed=1))),
    Case("linear_2d_bias", lambda m, d: m.nn.functional.linear(T(m, d, 2, 3), T(m, d, 4, 3, seed=1),
                                                               T(m, d, 2, 4, seed=2))),
    Case("conv1d", lambda m, d: m.nn.functional.conv1d(T(m, d, 1, 2, 6), conv_w(m, d, 3, 2, 2),
                                                       T(m, d, 3, seed=2))),
    Case("conv2d", lambda m, d: m.nn.functional.conv2d(T(m, d, 1, 2, 5, 5),
                                                       conv_w(m, d, 3, 2, 2, 2),
                                                       T(m, d, 3, seed=2))),
    Case("conv2d_same", lambda m, d: m.nn.functional.conv2d(T(m, d, 1, 2, 5, 5),
                                                            conv_w(m, d, 3, 2, 2, 2),
                                                            padding="same")),
    Case("conv2d_unbatched", lambda m, d: m.nn.functional.conv2d(T(m, d, 2, 5, 5),
                                                                 conv_w(m, d, 3, 2, 2, 2))),
    Case("conv_transpose1d", lambda m, d: m.nn.functional.conv_transpose1d(
        T(m, d, 1, 2, 5), conv_w(m, d, 2, 3, 2))),
    Case("conv_transpose2d", lambda m, d: m.nn.functional.conv_transpose2d(
        T(m, d, 1, 2, 4, 4), conv_w(m, d, 2, 3, 2, 2), T(m, d, 3, seed=2))),
    Case("prelu", lambda m, d: m.nn.functional.prelu(T(m, d, 2, 3), T(m, d, 1, seed=1))),
    Case("linalg.vecdot", lambda m, d: m.linalg.vecdot(T(m, d, 2, 3), T(m, d, 2, 3, seed=1))),
    Case("linalg.vecdot_1d", lambda m, d: m.linalg.vecdot(T(m, d, 3), T(m, d, 3, seed=1))),
    # composites whose products are listed ops
    Case("einsum_contraction", lambda m, d: m.einsum("ij,jk->ik", T(m, d, 2, 3),
                                                     T(m, d, 3, 4, seed=1))),
    Case("einsum_batch_contraction", lambda m, d: m.einsum("ij,ij->i", T(m, d, 2, 3),
                                                           T(m, d, 2, 3, seed=1))),
    Case("tensordot", lambda m, d: m.tensordot(T(m, d, 2, 3), T(m, d, 3, 4, seed=1), 1)),
    Case("inner_2d", lambda m, d: m.inner(T(m, d, 2, 3), T(m, d, 4, 3, seed=1))),
    Case("linalg.multi_dot", lambda m, d: m.linalg.multi_dot(
        [T(m, d, 2, 3), T(m, d, 3, 4, seed=1), T(m, d, 4, 2, seed=2)])),
    Case("linalg.matrix_power_2", lambda m, d: m.linalg.matrix_power(T(m, d, 3, 3), 2)),
    Case("linalg.matrix_power_-2", lambda m, d: m.linalg.matrix_power(SPD(m, d), -2)),
    Case("scaled_dot_product_attention", lambda m, d: m.nn.functional.scaled_dot_product_attention(
        T(m, d, 1, 2, 4, 8), T(m, d, 1, 2, 4, 8, seed=1), T(m, d, 1, 2, 4, 8, seed=2))),
    Case("linalg.pinv", lambda m, d: m.linalg.pinv(T(m, d, 3, 2)), lowp_inputs=False),
    # PyTorch's plain cells are composites of linear (Note [Autocast of the recurrent cells])
    Case("rnn_tanh_cell", lambda m, d: m.rnn_tanh_cell(
        T(m, d, 2, 3), T(m, d, 2, 4, seed=1), T(m, d, 4, 3, seed=2), T(m, d, 4, 4, seed=3),
        T(m, d, 4, seed=4), T(m, d, 4, seed=5))),
    Case("rnn_relu_cell", lambda m, d: m.rnn_relu_cell(
        T(m, d, 2, 3), T(m, d, 2, 4, seed=1), T(m, d, 4, 3, seed=2), T(m, d, 4, 4, seed=3),
        T(m, d, 4, seed=4), T(m, d, 4, seed=5))),
    Case("rnn_tanh_cell_no_bias", lambda m, d: m.rnn_tanh_cell(
        T(m, d, 2, 3), T(m, d, 2, 4, seed=1), T(m, d, 4, 3, seed=2), T(m, d, 4, 4, seed=3))),
]

# Ops that autocast runs in float32: float16 / bfloat16 inputs are cast up.
FP32 = [
    Case("prod", lambda m, d: m.prod(T(m, d, 4))),
    Case("prod_dim", lambda m, d: m.prod(T(m, d, 2, 3), 1)),
    Case("Tensor.prod", lambda m, d: T(m, d, 2, 3).prod()),
    Case("cdist", lambda m, d: m.cdist(T(m, d, 2, 3), T(m, d, 4, 3, seed=1))),
    Case("quantile", lambda m, d: m.quantile(T(m, d, 5), 0.3)),
    Case("quantile_tensor_q", lambda m, d: m.quantile(T(m, d, 5), m.tensor([0.2, 0.7]).to(d))),
    Case("nanquantile", lambda m, d: m.nanquantile(T(m, d, 5), 0.3)),
    Case("mse_loss", lambda m, d: m.nn.functional.mse_loss(T(m, d, 3), T(m, d, 3, seed=1))),
    Case("l1_loss", lambda m, d: m.nn.functional.l1_loss(T(m, d, 3), T(m, d, 3, seed=1))),
    Case("smooth_l1_loss", lambda m, d: m.nn.functional.smooth_l1_loss(T(m, d, 3),
                                                                       T(m, d, 3, seed=1))),
    Case("smooth_l1_loss_beta0", lambda m, d: m.nn.functional.smooth_l1_loss(
        T(m, d, 3), T(m, d, 3, seed=1), beta=0.0)),
    Case("huber_loss", lambda m, d: m.nn.functional.huber_loss(T(m, d, 3), T(m, d, 3, seed=1))),
    Case("nll_loss", lambda m, d: m.nn.functional.nll_loss(T(m, d, 2, 3), labels(m, 0, 2))),
    Case("nll_loss_weight", lambda m, d: m.nn.functional.nll_loss(
        T(m, d, 2, 3), labels(m, 0, 2), weight=P(m, d, 3, seed=1))),
    Case("nll_loss_4d", lambda m, d: m.nn.functional.nll_loss(
        T(m, d, 2, 3, 2, 2), m.tensor(np.zeros((2, 2, 2), dtype=np.int64)))),
    Case("cross_entropy", lambda m, d: m.nn.functional.cross_entropy(T(m, d, 2, 3),
                                                                     labels(m, 0, 2))),
    Case("cross_entropy_probabilities", lambda m, d: m.nn.functional.cross_entropy(
        T(m, d, 2, 3), P(m, d, 2, 3, seed=1))),
    Case("binary_cross_entropy", lambda m, d: m.nn.functional.binary_cross_entropy(
        P(m, d, 3), P(m, d, 3, seed=1))),
    Case("binary_cross_entropy_with_logits", lambda m, d: (
        m.nn.functional.binary_cross_entropy_with_logits(T(m, d, 3), P(m, d, 3, seed=1),
                                                         pos_weight=P(m, d, 3, seed=2)))),
    Case("ctc_loss", lambda m, d: m.nn.functional.ctc_loss(
        m.nn.functional.log_softmax(T(m, m.float32, 5, 1, 3), 2).to(d),
        m.tensor(np.array([[1, 2]], dtype=np.int64)), [5], [2])),
    Case("pad_reflect_1d", lambda m, d: m.nn.functional.pad(T(m, d, 1, 2, 5), (1, 2),
                                                            mode="reflect")),
    Case("pad_reflect_2d", lambda m, d: m.nn.functional.pad(T(m, d, 1, 2, 4, 4), (1, 1, 2, 1),
                                                            mode="reflect")),
    Case("pad_replicate_1d", lambda m, d: m.nn.functional.pad(T(m, d, 1, 2, 5), (1, 2),
                                                              mode="replicate")),
    Case("pad_replicate_2d", lambda m, d: m.nn.functional.pad(T(m, d, 1, 2, 4, 4), (1, 1, 1, 1),
                                                              mode="replicate")),
    Case("pad_replicate_3d", lambda m, d: m.nn.functional.pad(T(m, d, 1, 1, 3, 3, 3),
                                                              (1, 1, 1, 1, 1, 1),
                                                              mode="replicate")),
    Case("linalg.cholesky", lambda m, d: m.linalg.cholesky(SPD(m, d))),
    Case("linalg.cholesky_ex", lambda m, d: m.linalg.cholesky_ex(SPD(m, d))[0]),
    Case("cholesky_solve", lambda m, d: m.cholesky_solve(T(m, d, 3, 2), SPD(m, d))),
    Case("cholesky_inverse", lambda m, d: m.cholesky_inverse(SPD(m, d))),
    Case("inverse", lambda m, d: m.inverse(SPD(m, d))),
    Case("Tensor.inverse", lambda m, d: SPD(m, d).inverse()),
    Case("linalg.inv", lambda m, d: m.linalg.inv(SPD(m, d))),
    Case("linalg.inv_ex", lambda m, d: m.linalg.inv_ex(SPD(m, d))[0]),
    Case("linalg.solve", lambda m, d: m.linalg.solve(SPD(m, d), T(m, d, 3, 2, seed=1))),
    Case("triangular_solve", lambda m, d: m.triangular_solve(T(m, d, 3, 2, seed=1),
                                                             SPD(m, d))[0]),
    Case("lu", lambda m, d: m.lu(SPD(m, d))[0]),
    Case("lu_solve", lambda m, d: m.lu_solve(
        T(m, d, 3, 2, seed=1), *m.linalg.lu_factor(SPD(m, m.float32)))),
    Case("linalg.eigh", lambda m, d: m.linalg.eigh(SPD(m, d))[1]),
    Case("linalg.eigvalsh", lambda m, d: m.linalg.eigvalsh(SPD(m, d))),
    Case("linalg.svd", lambda m, d: m.linalg.svd(T(m, d, 3, 2))[1]),
    Case("linalg.svdvals", lambda m, d: m.linalg.svdvals(T(m, d, 3, 2))),
    Case("svd", lambda m, d: m.svd(T(m, d, 3, 2))[2]),
    Case("svd_no_uv", lambda m, d: m.svd(T(m, d, 3, 2), compute_uv=False)[0]),
    Case("linalg.qr", lambda m, d: m.linalg.qr(T(m, d, 3, 2))[1]),
    Case("qr", lambda m, d: m.qr(T(m, d, 3, 2))[0], torch=False),  # removed from torch
    Case("geqrf", lambda m, d: m.geqrf(T(m, d, 3, 2))[0]),
    Case("linalg.householder_product", lambda m, d: m.linalg.householder_product(
        T(m, d, 3, 2), T(m, d, 2, seed=1))),
    Case("orgqr", lambda m, d: m.orgqr(T(m, d, 3, 2), T(m, d, 2, seed=1))),
    Case("linalg.lstsq", lambda m, d: m.linalg.lstsq(T(m, d, 3, 2), T(m, d, 3, 1, seed=1))[0]),
    Case("pinverse", lambda m, d: m.pinverse(T(m, d, 3, 2))),
    Case("linalg.cond", lambda m, d: m.linalg.cond(SPD(m, d))),
    Case("linalg.tensorinv", lambda m, d: m.linalg.tensorinv(
        SPD(m, m.float32, 4).reshape(4, 2, 2).to(d), ind=1)),
    Case("linalg.tensorsolve", lambda m, d: m.linalg.tensorsolve(
        SPD(m, m.float32, 4).reshape(2, 2, 4).to(d), T(m, d, 2, 2, seed=1))),
    Case("trace", lambda m, d: m.trace(T(m, d, 3, 3))),
    Case("Tensor.trace", lambda m, d: T(m, d, 3, 4).trace()),
    # Python compositions in python/ember/nn/functional/_loss.py
    Case("kl_div", lambda m, d: m.nn.functional.kl_div(T(m, d, 2, 3), P(m, d, 2, 3, seed=1),
                                                       reduction="batchmean")),
    Case("kl_div_log_target", lambda m, d: m.nn.functional.kl_div(
        T(m, d, 2, 3), T(m, d, 2, 3, seed=1), reduction="none", log_target=True)),
    Case("poisson_nll_loss", lambda m, d: m.nn.functional.poisson_nll_loss(
        T(m, d, 3), P(m, d, 3, seed=1))),
    Case("poisson_nll_loss_full", lambda m, d: m.nn.functional.poisson_nll_loss(
        P(m, d, 3), P(m, d, 3, seed=1) * 3, log_input=False, full=True, reduction="sum")),
    Case("margin_ranking_loss", lambda m, d: m.nn.functional.margin_ranking_loss(
        T(m, d, 3), T(m, d, 3, seed=1), m.ones(3).to(d))),
    Case("cosine_embedding_loss", lambda m, d: m.nn.functional.cosine_embedding_loss(
        T(m, d, 2, 3), T(m, d, 2, 3, seed=1), m.ones(2).to(d))),
    Case("cosine_embedding_loss_int_target", lambda m, d: m.nn.functional.cosine_embedding_loss(
        T(m, d, 2, 3), T(m, d, 2, 3, seed=1), labels(m, 1, -1), reduction="none")),
    Case("triplet_margin_loss", lambda m, d: m.nn.functional.triplet_margin_loss(
        T(m, d, 2, 3), T(m, d, 2, 3, seed=1), T(m, d, 2, 3, seed=2))),
    Case("triplet_margin_loss_swap", lambda m, d: m.nn.functional.triplet_margin_loss(
        T(m, d, 2, 3), T(m, d, 2, 3, seed=1), T(m, d, 2, 3, seed=2), p=1, swap=True,
        reduction="none")),
    Case("KLDivLoss", lambda m, d: m.nn.KLDivLoss(reduction="batchmean")(
        T(m, d, 2, 3), P(m, d, 2, 3, seed=1))),
    Case("TripletMarginLoss", lambda m, d: m.nn.TripletMarginLoss()(
        T(m, d, 2, 3), T(m, d, 2, 3, seed=1), T(m, d, 2, 3, seed=2))),
]

# float32 policy, results of another type.
FP32_OTHER = [
    Case("linalg.eig", lambda m, d: m.linalg.eig(SPD(m, d))[0]),  # complex64
    Case("linalg.eigvals", lambda m, d: m.linalg.eigvals(SPD(m, d))),  # complex64
    Case("linalg.matrix_rank", lambda m, d: m.linalg.matrix_rank(T(m, d, 3, 2))),  # int64
    Case("polar", lambda m, d: m.polar(P(m, d, 3), T(m, d, 3, seed=1))),  # complex64
]

# Ops with PyTorch's promote policy (cat, stack, index_copy): the floating inputs meet in float32
# when one of them is float32, else in the autocast dtype; float64 inputs are left alone.
PROMOTE = [
    Case("cat", lambda m, d: m.cat([T(m, d, 2), T(m, d, 3, seed=1)])),
    Case("stack", lambda m, d: m.stack([T(m, d, 2), T(m, d, 2, seed=1)])),
    Case("index_copy", lambda m, d: m.index_copy(T(m, d, 3, 2), 0, labels(m, 2, 0),
                                                 T(m, d, 2, 2, seed=1))),
    Case("Tensor.index_copy", lambda m, d: T(m, d, 3, 2).index_copy(0, labels(m, 1),
                                                                    T(m, d, 1, 2, seed=1))),
]

# Inputs of mixed dtypes for the promote policy: (case, input dtypes, result dtype); "lowp" is
# the autocast dtype.
PROMOTE_MIXED = [
    (Case("cat", lambda m, a, b: m.cat([T(m, a, 2), T(m, b, 3, seed=1)])),
     ("lowp", "float32"), "float32"),
    (Case("cat", lambda m, a, b: m.cat([T(m, a, 2), T(m, b, 3, seed=1)])),
     ("float32", "lowp"), "float32"),
    (Case("cat", lambda m, a, b: m.cat([T(m, a, 2), T(m, b, 3, seed=1)])),
     ("lowp", "float64"), "float64"),
    (Case("cat", lambda m, a, b: m.cat([T(m, a, 2), T(m, b, 3, seed=1)])),
     ("float32", "float64"), "float64"),
    (Case("cat", lambda m, a, b: m.cat([T(m, a, 2), T(m, b, 3, seed=1)])),
     ("lowp", "int64"), "lowp"),
    (Case("stack", lambda m, a, b: m.stack([T(m, a, 2), T(m, b, 2, seed=1)])),
     ("lowp", "float32"), "float32"),
    (Case("index_copy", lambda m, a, b: m.index_copy(T(m, a, 3, 2), 0, labels(m, 2, 0),
                                                     T(m, b, 2, 2, seed=1))),
     ("lowp", "float32"), "float32"),
    (Case("index_copy", lambda m, a, b: m.index_copy(T(m, a, 3, 2), 0, labels(m, 2, 0),
                                                     T(m, b, 2, 2, seed=1))),
     ("float32", "lowp"), "float32"),
]

# PyTorch's LSTM and GRU cells are composites of linear too, but their state (cx / hx) joins the
# pointwise step: the result has the dtype the lower-precision gates and the state meet in, so a
# float32 state gives float32 (Note [Autocast of the recurrent cells]).
STATE_DTYPE = [
    Case("lstm_cell", lambda m, d: m.lstm_cell(
        T(m, d, 2, 3), (T(m, d, 2, 4, seed=1), T(m, d, 2, 4, seed=2)), T(m, d, 16, 3, seed=3),
        T(m, d, 16, 4, seed=4), T(m, d, 16, seed=5), T(m, d, 16, seed=6))[0]),
    Case("lstm_cell_c", lambda m, d: m.lstm_cell(
        T(m, d, 2, 3), (T(m, d, 2, 4, seed=1), T(m, d, 2, 4, seed=2)), T(m, d, 16, 3, seed=3),
        T(m, d, 16, 4, seed=4))[1]),
    Case("gru_cell", lambda m, d: m.gru_cell(
        T(m, d, 2, 3), T(m, d, 2, 4, seed=1), T(m, d, 12, 3, seed=3), T(m, d, 12, 4, seed=4),
        T(m, d, 12, seed=5), T(m, d, 12, seed=6))),
    Case("gru_cell_no_bias", lambda m, d: m.gru_cell(
        T(m, d, 2, 3), T(m, d, 2, 4, seed=1), T(m, d, 12, 3, seed=3), T(m, d, 12, 4, seed=4))),
]

# Ops on no list: they run in their inputs' dtype (float32 stays float32).
UNLISTED = [
    Case("mv", lambda m, d: m.mv(T(m, d, 2, 3), T(m, d, 3, seed=1))),
    Case("addmv", lambda m, d: m.addmv(T(m, d, 2), T(m, d, 2, 3, seed=1), T(m, d, 3, seed=2))),
    Case("dot", lambda m, d: m.dot(T(m, d, 3), T(m, d, 3, seed=1))),
    Case("vdot", lambda m, d: m.vdot(T(m, d, 3), T(m, d, 3, seed=1))),
    Case("outer", lambda m, d: m.outer(T(m, d, 2), T(m, d, 3, seed=1))),
    Case("kron", lambda m, d: m.kron(T(m, d, 2, 2), T(m, d, 2, 2, seed=1))),
    Case("cross", lambda m, d: m.cross(T(m, d, 2, 3), T(m, d, 2, 3, seed=1), dim=1)),
    Case("inner_1d", lambda m, d: m.inner(T(m, d, 3), T(m, d, 3, seed=1))),
    Case("tensordot_full", lambda m, d: m.tensordot(T(m, d, 2, 3), T(m, d, 2, 3, seed=1), 2)),
    Case("einsum_elementwise", lambda m, d: m.einsum("ij,ij->ij", T(m, d, 2, 3),
                                                     T(m, d, 2, 3, seed=1))),
    Case("einsum_outer", lambda m, d: m.einsum("i,j->ij", T(m, d, 3), T(m, d, 2, seed=1))),
    Case("einsum_diagonal", lambda m, d: m.einsum("ii->i", T(m, d, 3, 3))),
    Case("bilinear", lambda m, d: m.nn.functional.bilinear(
        T(m, d, 2, 3), T(m, d, 2, 4, seed=1), T(m, d, 5, 3, 4, seed=2), T(m, d, 5, seed=3))),
    Case("convolution", lambda m, d: m.convolution(
        T(m, d, 1, 2, 5, 5), conv_w(m, d, 3, 2, 2, 2), None, [1, 1], [0, 0], [1, 1], False,
        [0, 0], 1)),
    Case("softmax", lambda m, d: m.softmax(T(m, d, 2, 3), 1)),
    Case("log_softmax", lambda m, d: m.nn.functional.log_softmax(T(m, d, 2, 3), 1)),
    Case("layer_norm", lambda m, d: m.nn.functional.layer_norm(T(m, d, 2, 3), (3,))),
    Case("group_norm", lambda m, d: m.nn.functional.group_norm(T(m, d, 2, 4, 3), 2)),
    Case("batch_norm", lambda m, d: m.nn.functional.batch_norm(T(m, d, 4, 3), None, None,
                                                               training=True)),
    Case("sum", lambda m, d: m.sum(T(m, d, 2, 3))),
    Case("mean", lambda m, d: T(m, d, 2, 3).mean()),
    Case("cumsum", lambda m, d: m.cumsum(T(m, d, 4), 0)),
    Case("exp", lambda m, d: m.exp(T(m, d, 3))),
    Case("add", lambda m, d: T(m, d, 3) + T(m, d, 3, seed=1)),
    Case("relu", lambda m, d: m.nn.functional.relu(T(m, d, 3))),
    Case("gelu", lambda m, d: m.nn.functional.gelu(T(m, d, 3))),
    Case("linalg.vector_norm", lambda m, d: m.linalg.vector_norm(T(m, d, 2, 3))),
    Case("linalg.matrix_exp", lambda m, d: m.linalg.matrix_exp(T(m, d, 3, 3) * 0.1)),
    Case("linalg.matrix_power_1", lambda m, d: m.linalg.matrix_power(T(m, d, 3, 3), 1)),
    Case("pad_constant", lambda m, d: m.nn.functional.pad(T(m, d, 1, 2, 5), (1, 2))),
    Case("pad_circular", lambda m, d: m.nn.functional.pad(T(m, d, 1, 2, 5), (1, 2),
                                                          mode="circular")),
    Case("pad_reflect_3d", lambda m, d: m.nn.functional.pad(T(m, d, 1, 1, 3, 3, 3),
                                                            (1, 1, 1, 1, 1, 1), mode="reflect")),
    Case("max_pool2d", lambda m, d: m.nn.functional.max_pool2d(T(m, d, 1, 1, 4, 4), 2)),
    Case("avg_pool2d", lambda m, d: m.nn.functional.avg_pool2d(T(m, d, 1, 1, 4, 4), 2)),
    Case("interpolate", lambda m, d: m.nn.functional.interpolate(T(m, d, 1, 1, 4),
                                                                 scale_factor=2.0)),
    Case("embedding", lambda m, d: m.nn.functional.embedding(labels(m, 0, 2), T(m, d, 3, 2))),
    Case("gaussian_nll_loss", lambda m, d: m.nn.functional.gaussian_nll_loss(
        T(m, d, 3), T(m, d, 3, seed=1), P(m, d, 3, seed=2))),
]

# Ops on no list that have no float16 / bfloat16 kernel: only float32 inputs are checked.
UNLISTED_FLOAT32_ONLY = [
    Case("linalg.det", lambda m, d: m.linalg.det(SPD(m, d))),
    Case("linalg.slogdet", lambda m, d: m.linalg.slogdet(SPD(m, d))[1]),
    Case("linalg.solve_ex", lambda m, d: m.linalg.solve_ex(SPD(m, d), T(m, d, 3, 2, seed=1))[0]),
    Case("linalg.solve_triangular", lambda m, d: m.linalg.solve_triangular(
        SPD(m, d), T(m, d, 3, 2, seed=1), upper=True)),
    Case("linalg.lu_factor", lambda m, d: m.linalg.lu_factor(SPD(m, d))[0]),
]

def ids(cases):
    return [c.name for c in cases]


def dt(name, lib=ember):
    return getattr(lib, name)


# ---- lower precision -------------------------------------------------------------------------


@pytest.mark.parametrize("lowp", LOWP)
@pytest.mark.parametrize("case", LOWER, ids=ids(LOWER))
def test_lower_precision_ops_cast_float32_inputs_down(case, lowp):
    with ember.autocast("cpu", dtype=dt(lowp)):
        out = case.run(ember, ember.float32)
    assert out.dtype == dt(lowp)
    # Outside the region the same call stays in float32.
    assert case.run(ember, ember.float32).dtype == ember.float32


LOWER_LOWP_INPUTS = [c for c in LOWER if c.lowp_inputs]


@pytest.mark.parametrize("case", LOWER_LOWP_INPUTS, ids=ids(LOWER_LOWP_INPUTS))
def test_lower_precision_ops_cast_the_other_16_bit_type(case):
    # bfloat16 inputs in a float16 region are cast to float16.
    with ember.autocast("cpu", dtype=ember.float16):
        assert case.run(ember, ember.bfloat16).dtype == ember.float16


@pytest.mark.parametrize("name", ["mm", "matmul", "linear", "conv2d", "addmm", "prelu"])
def test_float64_is_never_cast(name):
    case = next(c for c in LOWER if c.name == name)
    with ember.autocast("cpu"):
        assert case.run(ember, ember.float64).dtype == ember.float64


def test_integer_inputs_are_not_cast():
    a = ember.tensor([[1, 2], [3, 4]])
    with ember.autocast("cpu"):
        assert ember.mm(a, a).dtype == ember.int64
        assert ember.prod(a).dtype == ember.int64


def test_mixed_float32_and_lower_precision_inputs_meet_in_the_autocast_dtype():
    a, b = ember.randn(2, 3), ember.randn(3, 4).to(ember.bfloat16)
    with ember.autocast("cpu"):
        assert ember.mm(a, b).dtype == ember.bfloat16
        assert ember.matmul(b.t(), a.t()).dtype == ember.bfloat16
        # float32 policy: float64 is left alone, the bfloat16 input goes to float32, and the loss
        # promotes as usual.
        x = ember.randn(3).to(ember.bfloat16)
        assert F.mse_loss(x, ember.randn(3).double()).dtype == ember.float64


def test_out_and_in_place_forms_are_not_autocast():
    a, b = ember.randn(2, 3), ember.randn(3, 4)
    with ember.autocast("cpu"):
        out = ember.empty(2, 4)
        assert ember.mm(a, b, out=out) is out and out.dtype == ember.float32
        assert ember.matmul(a, b, out=ember.empty(0)).dtype == ember.float32
        c = ember.zeros(2, 4)
        assert c.addmm_(a, b) is c and c.dtype == ember.float32
        np.testing.assert_allclose(c.numpy(), a.numpy() @ b.numpy(), rtol=1e-5, atol=1e-5)


def test_lower_precision_values_are_the_rounded_computation():
    a, b = ember.randn(4, 5), ember.randn(5, 3)
    with ember.autocast("cpu"):
        got = ember.mm(a, b)
    want = ember.mm(a.to(ember.bfloat16), b.to(ember.bfloat16))
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


# ---- float32 -------------------------------------------------------------------------------


@pytest.mark.parametrize("lowp", LOWP)
@pytest.mark.parametrize("case", FP32, ids=ids(FP32))
def test_float32_ops_cast_16_bit_inputs_up(case, lowp):
    with ember.autocast("cpu", dtype=dt(lowp)):
        assert case.run(ember, dt(lowp)).dtype == ember.float32
        assert case.run(ember, ember.float32).dtype == ember.float32


@pytest.mark.parametrize("case", FP32_OTHER, ids=ids(FP32_OTHER))
def test_float32_ops_with_results_of_another_type(case):
    want = {"linalg.eig": ember.complex64, "linalg.eigvals": ember.complex64,
            "linalg.matrix_rank": ember.int64, "polar": ember.complex64}[case.name]
    with ember.autocast("cpu"):
        assert case.run(ember, ember.bfloat16).dtype == want
        assert case.run(ember, ember.float32).dtype == want


def test_float32_ops_keep_an_explicit_dtype_and_float64():
    x = ember.randn(3).to(ember.bfloat16)
    with ember.autocast("cpu"):
        assert ember.prod(x, dtype=ember.float64).dtype == ember.float64
        assert ember.prod(x.double()).dtype == ember.float64
        assert F.mse_loss(x.double(), x.double()).dtype == ember.float64


def test_float32_values_match_the_float32_computation():
    x, y = ember.randn(6).to(ember.bfloat16), ember.randn(6).to(ember.bfloat16)
    with ember.autocast("cpu"):
        got = F.mse_loss(x, y)
    want = ((x.float().numpy() - y.float().numpy()) ** 2).mean()
    np.testing.assert_allclose(got.item(), want, rtol=1e-5)


PYTHON_LOSSES = ["kl_div", "kl_div_log_target", "poisson_nll_loss", "poisson_nll_loss_full",
                 "margin_ranking_loss", "cosine_embedding_loss", "triplet_margin_loss",
                 "triplet_margin_loss_swap"]


@pytest.mark.parametrize("name", PYTHON_LOSSES)
def test_python_losses_are_not_cast_outside_a_region(name):
    case = next(c for c in FP32 if c.name == name)
    assert case.run(ember, ember.bfloat16).dtype == ember.bfloat16
    with ember.autocast("cpu", enabled=False):
        assert case.run(ember, ember.float16).dtype == ember.float16
    with ember.autocast("cpu"):
        assert case.run(ember, ember.float64).dtype == ember.float64  # float64 is never cast


# The Python losses with leaves (x, y, z: bfloat16, or float32 for the reference).
LOSS_FNS = {
    "kl_div": lambda x, y, z: F.kl_div(x, y, reduction="batchmean", log_target=True),
    "poisson_nll_loss": lambda x, y, z: F.poisson_nll_loss(x, y.abs()),
    "margin_ranking_loss": lambda x, y, z: F.margin_ranking_loss(x, y, ember.ones(2, 3), 0.5),
    "cosine_embedding_loss": lambda x, y, z: F.cosine_embedding_loss(
        x, y, ember.tensor([1, -1]), margin=-0.5),
    "triplet_margin_loss": lambda x, y, z: F.triplet_margin_loss(x, y, z, margin=5.0),
}


@pytest.mark.parametrize("name", list(LOSS_FNS))
def test_python_losses_send_gradients_back_in_the_input_dtype(name):
    def leaves(dtype):
        return [T(ember, ember.bfloat16, 2, 3, seed=s).to(dtype).requires_grad_()
                for s in range(3)]

    xs = leaves(ember.bfloat16)
    with ember.autocast("cpu"):
        loss = LOSS_FNS[name](*xs)
    assert loss.dtype == ember.float32
    loss.backward()
    # The same values in float32 outside autocast: the autocast loss is that computation, and
    # its gradients are its gradients rounded to bfloat16.
    ref = leaves(ember.float32)
    want = LOSS_FNS[name](*ref)
    want.backward()
    np.testing.assert_allclose(loss.item(), want.item(), rtol=1e-6)
    for got, r in zip(xs, ref):
        if r.grad is None:
            assert got.grad is None
            continue
        assert got.grad.dtype == ember.bfloat16
        np.testing.assert_allclose(got.grad.float().numpy(), r.grad.numpy(), rtol=1e-2,
                                   atol=1e-3)


# ---- ops on no list --------------------------------------------------------------------------


@pytest.mark.parametrize("lowp", LOWP)
@pytest.mark.parametrize("case", UNLISTED, ids=ids(UNLISTED))
def test_unlisted_ops_run_in_their_inputs_dtype(case, lowp):
    with ember.autocast("cpu", dtype=dt(lowp)):
        assert case.run(ember, ember.float32).dtype == ember.float32
        assert case.run(ember, dt(lowp)).dtype == dt(lowp)


@pytest.mark.parametrize("case", UNLISTED_FLOAT32_ONLY, ids=ids(UNLISTED_FLOAT32_ONLY))
def test_unlisted_float32_only_ops_stay_float32(case):
    with ember.autocast("cpu"):
        assert case.run(ember, ember.float32).dtype == ember.float32


def test_modules_under_autocast():
    x = ember.randn(2, 3)
    with ember.autocast("cpu"):
        assert ember.nn.Linear(3, 4)(x).dtype == ember.bfloat16
        assert ember.nn.PReLU()(x).dtype == ember.bfloat16
        img = ember.randn(1, 2, 5, 5)
        assert ember.nn.Conv2d(2, 3, 3)(img).dtype == ember.bfloat16
        # The reflection padding runs in float32, the convolution after it in bfloat16.
        assert ember.nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect")(img).dtype == (
            ember.bfloat16)
        assert ember.nn.ConvTranspose2d(2, 3, 2)(img).dtype == ember.bfloat16
        assert ember.nn.Bilinear(3, 3, 2)(x, x).dtype == ember.float32
        assert ember.nn.LayerNorm(3)(x).dtype == ember.float32
        y = ember.nn.Linear(3, 4)(x)
        assert ember.nn.LayerNorm(4)(y).dtype == ember.bfloat16
        assert ember.nn.CrossEntropyLoss()(y, ember.tensor([0, 3])).dtype == ember.float32
        assert ember.nn.MSELoss()(y, y).dtype == ember.float32


# ---- promote ------------------------------------------------------------------------------------


@pytest.mark.parametrize("lowp", LOWP)
@pytest.mark.parametrize("case", PROMOTE, ids=ids(PROMOTE))
def test_promote_ops_keep_inputs_of_one_dtype(case, lowp):
    with ember.autocast("cpu", dtype=dt(lowp)):
        assert case.run(ember, ember.float32).dtype == ember.float32
        assert case.run(ember, dt(lowp)).dtype == dt(lowp)
        assert case.run(ember, ember.float64).dtype == ember.float64


def run_mixed(lib, case, dtypes, lowp):
    """case.run(lib, a, b) with the dtypes named in `dtypes` ("lowp": the autocast dtype)."""
    a, b = (getattr(lib, lowp if d == "lowp" else d) for d in dtypes)
    return case.run(lib, a, b)


MIXED_IDS = [f"{c.name}-{a}-{b}" for c, (a, b), _ in PROMOTE_MIXED]


@pytest.mark.parametrize("lowp", LOWP)
@pytest.mark.parametrize("case,dtypes,want", PROMOTE_MIXED, ids=MIXED_IDS)
def test_promote_ops_meet_in_the_widest_floating_type(case, dtypes, want, lowp):
    with ember.autocast("cpu", dtype=dt(lowp)):
        out = run_mixed(ember, case, dtypes, lowp)
    assert out.dtype == dt(lowp if want == "lowp" else want)


@pytest.mark.parametrize("case", PROMOTE, ids=ids(PROMOTE))
def test_promote_ops_refuse_the_other_16_bit_type(case):
    # PyTorch's prioritize raises for a float16 input in a bfloat16 region (and the reverse)
    # unless a float32 input came first.
    with ember.autocast("cpu"):
        with pytest.raises(RuntimeError, match="unexpected floating dtype float16"):
            case.run(ember, ember.float16)
    with ember.autocast("cpu", dtype=ember.float16):
        with pytest.raises(RuntimeError, match="unexpected floating dtype bfloat16"):
            case.run(ember, ember.bfloat16)
        a, b = T(ember, ember.float32, 2), T(ember, ember.bfloat16, 3, seed=1)
        assert ember.cat([a, b]).dtype == ember.float32
        with pytest.raises(RuntimeError, match="unexpected floating dtype"):
            ember.cat([b, a])


def test_index_copy_of_mixed_dtypes_runs_under_autocast_only():
    x, source = T(ember, ember.bfloat16, 3, 2), T(ember, ember.float32, 1, 2, seed=1)
    index = labels(ember, 1)
    with pytest.raises(RuntimeError, match="same dtype"):
        ember.index_copy(x, 0, index, source)
    with ember.autocast("cpu"):
        out = ember.index_copy(x, 0, index, source)
        # The in-place form is not autocast.
        with pytest.raises(RuntimeError, match="same dtype"):
            x.clone().index_copy_(0, index, source)
    assert out.dtype == ember.float32
    np.testing.assert_array_equal(out[1].numpy(), source[0].numpy())
    np.testing.assert_array_equal(out[0].numpy(), x[0].float().numpy())
    np.testing.assert_array_equal(out[2].numpy(), x[2].float().numpy())


def test_promote_out_forms_are_not_autocast():
    a, b = T(ember, ember.bfloat16, 2), T(ember, ember.float16, 3, seed=1)
    with ember.autocast("cpu"):
        out = ember.empty(0)
        assert ember.cat([a, b], out=out) is out and out.dtype == ember.float32
        out = ember.empty(0)
        assert ember.stack([a, a], out=out) is out and out.dtype == ember.float32


def test_promote_values_and_gradients():
    a = T(ember, ember.bfloat16, 2).requires_grad_()
    b = T(ember, ember.float32, 3, seed=1).requires_grad_()
    with ember.autocast("cpu"):
        y = ember.cat([a, b])
    assert y.dtype == ember.float32
    np.testing.assert_array_equal(y.detach().numpy(),
                                  np.concatenate([a.detach().float().numpy(), b.detach().numpy()]))
    (y * ember.arange(5.0)).sum().backward()
    assert a.grad.dtype == ember.bfloat16 and b.grad.dtype == ember.float32
    np.testing.assert_array_equal(a.grad.float().numpy(), [0.0, 1.0])
    np.testing.assert_array_equal(b.grad.numpy(), [2.0, 3.0, 4.0])


# ---- the recurrent cells and layers ------------------------------------------------------------


@pytest.mark.parametrize("lowp", LOWP)
@pytest.mark.parametrize("case", STATE_DTYPE, ids=ids(STATE_DTYPE))
def test_lstm_and_gru_cells_give_their_states_dtype(case, lowp):
    with ember.autocast("cpu", dtype=dt(lowp)):
        assert case.run(ember, ember.float32).dtype == ember.float32
        assert case.run(ember, dt(lowp)).dtype == dt(lowp)
        assert case.run(ember, ember.float64).dtype == ember.float64
    assert case.run(ember, ember.float32).dtype == ember.float32


def cell_args(name, dtype=ember.float32, bias=True):
    """(input, hidden, w_ih, w_hh[, b_ih, b_hh]) of a cell with input size 3 and hidden size 4;
    hidden is (h, c) for lstm_cell."""
    gates = {"lstm_cell": 16, "gru_cell": 12}.get(name, 4)
    hidden = T(ember, dtype, 2, 4, seed=1)
    if name == "lstm_cell":
        hidden = (hidden, T(ember, dtype, 2, 4, seed=2))
    args = [T(ember, dtype, 2, 3), hidden, T(ember, dtype, gates, 3, seed=3) * 0.5,
            T(ember, dtype, gates, 4, seed=4) * 0.5]
    if bias:
        args += [T(ember, dtype, gates, seed=5), T(ember, dtype, gates, seed=6)]
    return args


def lowered(args, lowp, name):
    """The gate products' operands of a cell in the autocast dtype (the state kept as it is)."""
    x, hidden, *weights = args
    h = hidden[0] if name == "lstm_cell" else hidden
    return x.to(lowp), h.to(lowp), [w.to(lowp) for w in weights]


def lstm_reference(args, lowp):
    """PyTorch's CPU LSTMCell under autocast, written out with explicit casts."""
    x, h, w = lowered(args, lowp, "lstm_cell")
    b_ih, b_hh = (w[2], w[3]) if len(w) == 4 else (None, None)
    gates = F.linear(h, w[1], b_hh) + F.linear(x, w[0], b_ih)
    i, f, g, o = gates.chunk(4, 1)
    cy = f.sigmoid() * args[1][1] + i.sigmoid() * g.tanh()
    return o.sigmoid() * cy.tanh(), cy


def gru_reference(args, lowp):
    """PyTorch's CPU GRUCell under autocast, written out with explicit casts."""
    x, h, w = lowered(args, lowp, "gru_cell")
    b_ih, b_hh = (w[2], w[3]) if len(w) == 4 else (None, None)
    ir, iz, in_ = F.linear(x, w[0], b_ih).chunk(3, 1)
    hr, hz, hn = F.linear(h, w[1], b_hh).chunk(3, 1)
    r, z = (hr + ir).sigmoid(), (hz + iz).sigmoid()
    n = (in_ + hn * r).tanh()
    return (args[1] - n) * z + n


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("lowp", LOWP)
def test_cell_values_are_pytorchs_composites_with_lower_precision_gates(lowp, bias):
    lowp = dt(lowp)
    args = cell_args("lstm_cell", bias=bias)
    with ember.autocast("cpu", dtype=lowp):
        hy, cy = ember.lstm_cell(*args)
    want_h, want_c = lstm_reference(args, lowp)
    full_h, _ = ember.lstm_cell(*args)
    assert hy.dtype == cy.dtype == ember.float32
    np.testing.assert_allclose(hy.numpy(), want_h.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cy.numpy(), want_c.numpy(), rtol=1e-5, atol=1e-6)
    assert np.abs(hy.numpy() - full_h.numpy()).max() > 1e-5  # the gates were rounded

    args = cell_args("gru_cell", bias=bias)
    with ember.autocast("cpu", dtype=lowp):
        hy = ember.gru_cell(*args)
    assert hy.dtype == ember.float32
    np.testing.assert_allclose(hy.numpy(), gru_reference(args, lowp).numpy(), rtol=1e-5,
                               atol=1e-6)
    assert np.abs(hy.numpy() - ember.gru_cell(*args).numpy()).max() > 1e-5

    for name in ("rnn_tanh_cell", "rnn_relu_cell"):
        args = cell_args(name, bias=bias)
        with ember.autocast("cpu", dtype=lowp):
            hy = getattr(ember, name)(*args)
        x, h, w = lowered(args, lowp, name)
        assert hy.dtype == lowp
        np.testing.assert_array_equal(hy.float().numpy(),
                                      getattr(ember, name)(x, h, *w).float().numpy())


def test_lstm_cell_with_a_projected_hidden_state_under_autocast():
    # The hidden state has proj_size (2) features, the cell state hidden_size (4), as the
    # sequence functions use it.
    x, h, c = T(ember, ember.float32, 2, 3), T(ember, ember.float32, 2, 2, seed=1), \
        T(ember, ember.float32, 2, 4, seed=2)
    w_ih, w_hh = T(ember, ember.float32, 16, 3, seed=3), T(ember, ember.float32, 16, 2, seed=4)
    with ember.autocast("cpu"):
        hy, cy = ember.lstm_cell(x, (h, c), w_ih, w_hh)
    full_h, full_c = ember.lstm_cell(x, (h, c), w_ih, w_hh)
    assert hy.shape == cy.shape == (2, 4) and hy.dtype == cy.dtype == ember.float32
    np.testing.assert_allclose(hy.numpy(), full_h.numpy(), atol=5e-2)
    np.testing.assert_allclose(cy.numpy(), full_c.numpy(), atol=5e-2)


def test_cell_errors_under_autocast_name_the_cell():
    args = cell_args("lstm_cell")
    args[1] = (args[1][0], T(ember, ember.float32, 2, 5, seed=2))  # cx of the wrong size
    with ember.autocast("cpu"):
        with pytest.raises(RuntimeError, match=r"\[lstm_cell\] hidden1 has inconsistent"):
            ember.lstm_cell(*args)
        args = cell_args("gru_cell")
        args[0] = T(ember, ember.float32, 2, 5)
        with pytest.raises(RuntimeError, match=r"\[gru_cell\] input has inconsistent"):
            ember.gru_cell(*args)


@pytest.mark.parametrize("name", ["lstm_cell", "gru_cell", "rnn_tanh_cell"])
def test_cell_gradients_reach_float32_leaves_in_float32(name):
    def run(autocast):
        args = cell_args(name)
        leaves = [args[0], *(args[1] if name == "lstm_cell" else (args[1],)), *args[2:]]
        for t in leaves:
            t.requires_grad_()
        with ember.autocast("cpu", enabled=autocast):
            out = getattr(ember, name)(*args)
        outs = out if isinstance(out, tuple) else (out,)
        sum(o.float().sum() for o in outs).backward()
        return leaves

    got, want = run(True), run(False)
    for g, w in zip(got, want):
        assert g.grad.dtype == ember.float32
        np.testing.assert_allclose(g.grad.numpy(), w.grad.numpy(), rtol=5e-2, atol=5e-2)


def test_recurrent_layers_under_autocast():
    x = ember.randn(5, 2, 3)
    with ember.autocast("cpu"):
        out, h = ember.nn.RNN(3, 4)(x)
        assert out.dtype == h.dtype == ember.bfloat16
        out, h = ember.nn.RNN(3, 4, nonlinearity="relu", bidirectional=True)(x)
        assert out.dtype == h.dtype == ember.bfloat16
        out, h = ember.nn.GRU(3, 4)(x)
        assert out.dtype == h.dtype == ember.float32
        assert ember.nn.RNNCell(3, 4)(x[0]).dtype == ember.bfloat16
        assert ember.nn.GRUCell(3, 4)(x[0]).dtype == ember.float32
        hy, cy = ember.nn.LSTMCell(3, 4)(x[0])
        assert hy.dtype == cy.dtype == ember.float32


LSTM_PROJ = [
    {"proj_size": 2},
    {"proj_size": 2, "bidirectional": True},
    {"proj_size": 2, "num_layers": 2, "batch_first": True},
    {"proj_size": 3, "num_layers": 2, "bidirectional": True, "bias": False},
]


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("kwargs", LSTM_PROJ, ids=[str(k) for k in LSTM_PROJ])
def test_lstm_with_projections_under_autocast(kwargs, packed):
    from ember.nn.utils.rnn import pack_padded_sequence

    lstm = ember.nn.LSTM(3, 4, **kwargs)
    x = ember.randn(2, 5, 3) if kwargs.get("batch_first") else ember.randn(5, 2, 3)
    inp = pack_padded_sequence(x, [5, 3], batch_first=kwargs.get("batch_first", False)) \
        if packed else x
    with ember.autocast("cpu"):
        out, (h, c) = lstm(inp)
    out = out.data if packed else out
    # PyTorch's: the projected output and h in bfloat16, the cell state in float32.
    assert (out.dtype, h.dtype, c.dtype) == (ember.bfloat16, ember.bfloat16, ember.float32)
    directions = 2 if kwargs.get("bidirectional") else 1
    assert out.shape[-1] == kwargs["proj_size"] * directions
    assert h.shape[-1] == kwargs["proj_size"] and c.shape[-1] == 4
    (out.float().sum() + h.float().sum() + c.sum()).backward()
    for p in lstm.parameters():
        assert p.grad is not None and p.grad.dtype == ember.float32
        assert bool(ember.isfinite(p.grad).all())
    # Against the float32 run (bfloat16 rounding: a loose tolerance).
    with ember.no_grad():
        ref, (ref_h, ref_c) = lstm(inp)
    ref = ref.data if packed else ref
    np.testing.assert_allclose(out.detach().float().numpy(), ref.numpy(), atol=1e-1)
    np.testing.assert_allclose(c.detach().numpy(), ref_c.numpy(), atol=1e-1)


# ---- regions: nesting, enabled=False, decorator, exceptions, threads ---------------------------


def mm_dtype():
    return ember.mm(ember.randn(2, 2), ember.randn(2, 2)).dtype


def test_nesting_restores_the_enclosing_state():
    assert not ember.is_autocast_enabled("cpu")
    with ember.autocast("cpu"):
        assert ember.is_autocast_enabled("cpu") and mm_dtype() == ember.bfloat16
        with ember.autocast("cpu", enabled=False):
            assert not ember.is_autocast_enabled("cpu")
            assert mm_dtype() == ember.float32
            with ember.autocast("cpu", dtype=ember.float16):
                assert mm_dtype() == ember.float16
            assert mm_dtype() == ember.float32
        with ember.autocast("cpu", dtype=ember.float16):
            assert ember.get_autocast_dtype("cpu") == ember.float16
            assert mm_dtype() == ember.float16
        assert ember.get_autocast_dtype("cpu") == ember.bfloat16
        assert mm_dtype() == ember.bfloat16
    assert not ember.is_autocast_enabled("cpu")
    assert mm_dtype() == ember.float32


def test_region_returns_itself_and_keeps_its_arguments():
    ac = ember.autocast("cpu", dtype=ember.float16)
    assert ac.device == "cpu" and ac.fast_dtype == ember.float16 and ac._enabled
    with ac as entered:
        assert entered is ac
    assert ember.autocast("cpu").fast_dtype == ember.bfloat16
    assert not ember.autocast("cpu", enabled=False)._enabled


def test_decorator():
    @ember.autocast("cpu")
    def forward(a, b):
        """Docstring."""
        return ember.mm(a, b)

    a = ember.randn(2, 3)
    assert forward(a, a.t()).dtype == ember.bfloat16
    assert forward.__name__ == "forward" and forward.__doc__ == "Docstring."
    assert not ember.is_autocast_enabled("cpu")
    assert ember.mm(a, a.t()).dtype == ember.float32

    @ember.amp.autocast("cpu", enabled=False)
    def plain(a, b):
        return ember.mm(a, b)

    with ember.autocast("cpu"):
        assert plain(a, a.t()).dtype == ember.float32
        assert ember.is_autocast_enabled("cpu")


def test_decorating_a_non_callable_raises():
    with pytest.raises(TypeError, match="requires a callable"):
        ember.autocast("cpu")(3)


def test_state_is_restored_after_an_exception():
    with pytest.raises(KeyError):
        with ember.autocast("cpu", dtype=ember.float16, cache_enabled=False):
            with ember.autocast("cpu", enabled=False):
                raise KeyError("inner")
    assert not ember.is_autocast_enabled("cpu")
    assert ember.get_autocast_dtype("cpu") == ember.bfloat16
    assert ember.is_autocast_cache_enabled()
    # The nesting count is back to 0.
    assert ember.autocast_increment_nesting() == 1
    assert ember.autocast_decrement_nesting() == 0

    @ember.autocast("cpu")
    def fails():
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        fails()
    assert not ember.is_autocast_enabled("cpu")
    assert mm_dtype() == ember.float32


def test_state_is_thread_local():
    seen = {}

    def worker(key):
        seen[key] = (ember.is_autocast_enabled("cpu"), mm_dtype())

    with ember.autocast("cpu"):
        t = threading.Thread(target=worker, args=("other thread",))
        t.start()
        t.join()
        assert mm_dtype() == ember.bfloat16
    assert seen["other thread"] == (False, ember.float32)

    def region():
        with ember.autocast("cpu", dtype=ember.float16):
            seen["in region"] = mm_dtype()
            barrier.wait()  # the main thread looks while this region is open
            barrier.wait()

    barrier = threading.Barrier(2, timeout=60)
    t = threading.Thread(target=region)
    t.start()
    barrier.wait()
    seen["main"] = (ember.is_autocast_enabled("cpu"), mm_dtype())
    barrier.wait()
    t.join(60)
    assert seen["in region"] == ember.float16
    assert seen["main"] == (False, ember.float32)


# ---- validation -------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [ember.float32, ember.float64, ember.int32])
def test_unsupported_cpu_dtype_warns_and_disables(bad):
    with pytest.warns(UserWarning, match="CPU Autocast only supports dtypes of"):
        ac = ember.autocast("cpu", dtype=bad)
    assert not ac._enabled
    with ac:
        assert not ember.is_autocast_enabled("cpu")
        assert ember.get_autocast_dtype("cpu") == bad  # set anyway, as PyTorch does
        assert mm_dtype() == ember.float32
    assert ember.get_autocast_dtype("cpu") == ember.bfloat16


def test_disabled_region_does_not_validate_the_dtype():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.autocast("cpu", dtype=ember.float32, enabled=False)


def test_device_type_must_be_a_known_string():
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        ember.autocast(ember.device("cpu"))
    with pytest.raises(RuntimeError, match="device type"):
        ember.autocast("tpu")
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'mps'"):
        ember.autocast("mps")
    assert ember.amp.is_autocast_available("cpu")
    assert ember.amp.is_autocast_available("cuda")
    assert ember.amp.is_autocast_available("cuda:0")
    assert not ember.amp.is_autocast_available("xpu")
    with pytest.raises(RuntimeError):
        ember.amp.is_autocast_available("tpu")


# ---- the state functions ----------------------------------------------------------------------


def test_state_functions():
    assert not ember.is_autocast_enabled("cpu") and not ember.is_autocast_enabled("cuda")
    assert not ember.is_autocast_enabled()  # no argument: cuda
    assert ember.get_autocast_dtype("cpu") == ember.bfloat16
    assert ember.get_autocast_dtype("cuda") == ember.float16
    assert ember.is_autocast_cache_enabled()
    try:
        ember.set_autocast_enabled("cpu", True)
        assert ember.is_autocast_enabled("cpu") and mm_dtype() == ember.bfloat16
        ember.set_autocast_dtype("cpu", ember.float16)
        assert mm_dtype() == ember.float16
        ember.set_autocast_enabled(True)  # one argument: cuda
        assert ember.is_autocast_enabled() and ember.is_autocast_enabled("cuda")
        ember.set_autocast_cache_enabled(False)
        assert not ember.is_autocast_cache_enabled()
        assert ember.autocast_increment_nesting() == 1
        assert ember.autocast_increment_nesting() == 2
        assert ember.autocast_decrement_nesting() == 1
        assert ember.autocast_decrement_nesting() == 0
        with pytest.raises(TypeError):
            ember.set_autocast_enabled("cpu", 1)
        with pytest.raises(TypeError):
            ember.is_autocast_enabled(3)
        with pytest.raises(TypeError):
            ember.set_autocast_dtype("cpu", "bfloat16")
    finally:
        ember.set_autocast_enabled("cpu", False)
        ember.set_autocast_enabled("cuda", False)
        ember.set_autocast_dtype("cpu", ember.bfloat16)
        ember.set_autocast_cache_enabled(True)
    assert mm_dtype() == ember.float32


def test_deprecated_cpu_and_gpu_state_functions():
    with pytest.warns(DeprecationWarning, match=r"is_autocast_enabled\('cpu'\)"):
        assert ember.is_autocast_cpu_enabled() is False
    with pytest.warns(DeprecationWarning, match=r"get_autocast_dtype\('cpu'\)"):
        assert ember.get_autocast_cpu_dtype() == ember.bfloat16
    with pytest.warns(DeprecationWarning, match=r"get_autocast_dtype\('cuda'\)"):
        assert ember.get_autocast_gpu_dtype() == ember.float16
    try:
        with pytest.warns(DeprecationWarning, match=r"set_autocast_enabled\('cpu', enabled\)"):
            ember.set_autocast_cpu_enabled(True)
        with pytest.warns(DeprecationWarning, match=r"set_autocast_dtype\('cpu', dtype\)"):
            ember.set_autocast_cpu_dtype(ember.float16)
        assert ember.is_autocast_enabled("cpu") and mm_dtype() == ember.float16
        with pytest.warns(DeprecationWarning, match=r"set_autocast_dtype\('cuda', dtype\)"):
            ember.set_autocast_gpu_dtype(ember.bfloat16)
        assert ember.get_autocast_dtype("cuda") == ember.bfloat16
    finally:
        ember.set_autocast_enabled("cpu", False)
        ember.set_autocast_dtype("cpu", ember.bfloat16)
        ember.set_autocast_dtype("cuda", ember.float16)


def test_exports():
    assert ember.autocast is ember.amp.autocast is ember.amp.autocast_mode.autocast
    assert issubclass(ember.cpu.amp.autocast, ember.autocast)
    assert issubclass(ember.cuda.amp.autocast, ember.autocast)
    assert callable(ember.amp.custom_fwd) and callable(ember.amp.custom_bwd)
    assert ember.cpu.is_available() and ember.cpu.is_initialized()
    assert ember.cpu.device_count() == 1 and ember.cpu.current_device() == "cpu"
    assert ember.cpu.synchronize() is None
    with ember.cpu.stream(ember.cpu.Stream()) as s:
        assert s is None
    assert ember.cpu.current_stream() is ember.cpu._default_cpu_stream


def test_cpu_amp_autocast_is_the_deprecated_cpu_region():
    with pytest.warns(FutureWarning, match=r"ember.cpu.amp.autocast\(args...\)` is deprecated"):
        ac = ember.cpu.amp.autocast()
    assert ac.device == "cpu" and ac.fast_dtype == ember.bfloat16 and ac._enabled
    with ac:
        assert mm_dtype() == ember.bfloat16
    with pytest.warns(FutureWarning):
        with ember.cpu.amp.autocast(dtype=ember.float16, cache_enabled=False):
            assert mm_dtype() == ember.float16
            assert not ember.is_autocast_cache_enabled()
    with pytest.warns(FutureWarning, match="GradScaler"):
        scaler = ember.cpu.amp.GradScaler()
    assert isinstance(scaler, ember.amp.GradScaler) and scaler.is_enabled()


# ---- ember.cuda.amp.autocast without CUDA ------------------------------------------------------


def caught(fn):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        result = fn()
    return result, [(w.category, str(w.message)) for w in record]


@pytest.mark.skipif(ember.cuda.is_available(), reason="checks the answers without a GPU")
def test_cuda_amp_autocast_without_cuda_warns_and_runs_disabled():
    ac, record = caught(lambda: ember.cuda.amp.autocast())
    assert [c for c, _ in record] == [FutureWarning, UserWarning]
    assert "ember.cuda.amp.autocast(args...)` is deprecated" in record[0][1]
    assert "CUDA is not available" in record[1][1]
    assert ac.device == "cuda" and ac.fast_dtype == ember.float16 and not ac._enabled
    with ac:
        assert not ember.is_autocast_enabled("cuda") and not ember.is_autocast_enabled("cpu")
        assert ember.get_autocast_dtype("cuda") == ember.float16
        assert mm_dtype() == ember.float32  # CPU tensors are not CUDA autocast's business
    # enabled=False: only the deprecation.
    ac, record = caught(lambda: ember.cuda.amp.autocast(enabled=False))
    assert [c for c, _ in record] == [FutureWarning]
    # The device-type form warns about CUDA only.
    ac, record = caught(lambda: ember.autocast("cuda"))
    assert [c for c, _ in record] == [UserWarning] and not ac._enabled


def test_cuda_amp_custom_fwd_bwd_are_deprecated():
    def fwd(ctx, x):
        return x

    decorated, record = caught(lambda: ember.cuda.amp.custom_fwd(fwd))
    assert [c for c, _ in record] == [FutureWarning] and callable(decorated)
    decorated, record = caught(lambda: ember.cuda.amp.custom_bwd(fwd))
    assert [c for c, _ in record] == [FutureWarning] and callable(decorated)


# ---- custom_fwd / custom_bwd --------------------------------------------------------------------


class _Double(ember.autograd.Function):
    @staticmethod
    @ember.amp.custom_fwd(device_type="cpu", cast_inputs=ember.float32)
    def forward(ctx, x):
        ctx.seen = (x.dtype, ember.is_autocast_enabled("cpu"))
        return x * 2

    @staticmethod
    @ember.amp.custom_bwd(device_type="cpu")
    def backward(ctx, g):
        ctx.seen_backward = ember.is_autocast_enabled("cpu")
        return g * 2


class _Square(ember.autograd.Function):
    @staticmethod
    @ember.amp.custom_fwd(device_type="cpu")
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ember.mm(x, x)

    @staticmethod
    @ember.amp.custom_bwd(device_type="cpu")
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        ctx_state.append(ember.is_autocast_enabled("cpu"))
        return ember.mm(g, x.t()) + ember.mm(x.t(), g)


ctx_state = []


def test_custom_fwd_with_cast_inputs_runs_forward_without_autocast():
    x = ember.ones(3, dtype=ember.bfloat16, requires_grad=True)
    with ember.autocast("cpu"):
        y = _Double.apply(x)
    assert y.dtype == ember.float32
    y.sum().backward()
    assert x.grad.dtype == ember.bfloat16
    np.testing.assert_allclose(x.grad.float().numpy(), [2, 2, 2])
    # Outside a region it changes nothing.
    assert _Double.apply(ember.ones(2, dtype=ember.bfloat16)).dtype == ember.bfloat16


def test_custom_bwd_runs_backward_with_the_forward_autocast_state():
    ctx_state.clear()
    x = ember.randn(2, 2, requires_grad=True)
    with ember.autocast("cpu"):
        y = _Square.apply(x)
    assert y.dtype == ember.bfloat16
    y.sum().backward()  # outside the region: backward re-enters it
    assert ctx_state == [True]
    assert x.grad.dtype == ember.float32
    with pytest.raises(ValueError, match="device_type"):
        ember.amp.custom_fwd(device_type=3)


# ---- the weight cache -------------------------------------------------------------------------


def cast_node(y, i=1):
    """The node of the cast feeding input `i` of y's op."""
    return y.grad_fn.next_functions[i][0]


def cache_size():
    return ember._C._autocast._cache_size()


def test_cache_reuses_one_cast_of_a_parameter_per_region():
    a, w = ember.randn(2, 3), ember.randn(3, 4, requires_grad=True)
    with ember.autocast("cpu"):
        y1, y2 = ember.mm(a, w), ember.mm(a, w)
        c1, c2 = cast_node(y1), cast_node(y2)
        assert c1.name() == "ToCopyBackward0" and c1 is c2
        # another op on the list: addmm's inputs are (input, mat1, mat2)
        assert cast_node(ember.addmm(ember.zeros(4), a, w), 2) is c1
        assert cache_size() == 1
        with ember.autocast("cpu"):  # an inner region shares the outer one's cache
            assert cast_node(ember.mm(a, w)) is c1
        assert cache_size() == 1
    assert cache_size() == 0  # cleared when the outermost region exits
    with ember.autocast("cpu"):
        assert cast_node(ember.mm(a, w)) is not c1


def test_cache_is_shared_by_modules_and_functions():
    lin = ember.nn.Linear(3, 4)
    x = ember.randn(2, 3)
    with ember.autocast("cpu"):
        lin(x)
        lin(x)
        F.linear(x, lin.weight)
        assert cache_size() == 2  # weight and bias, once each
    assert cache_size() == 0


def test_cache_disabled():
    a, w = ember.randn(2, 3), ember.randn(3, 4, requires_grad=True)
    with ember.autocast("cpu", cache_enabled=False):
        assert cast_node(ember.mm(a, w)) is not cast_node(ember.mm(a, w))
        assert cache_size() == 0
    assert ember.is_autocast_cache_enabled()


def test_only_float32_leaves_that_require_grad_are_cached():
    a = ember.randn(2, 3)
    w = ember.randn(3, 4, requires_grad=True)
    with ember.autocast("cpu"):
        ember.mm(a, ember.randn(3, 4))  # no grad
        ember.mm(a, w * 1)  # not a leaf
        ember.mm(a, w[:, :3])  # a view
        assert cache_size() == 0
        wb = ember.randn(3, 4).to(ember.bfloat16).requires_grad_()
        with ember.autocast("cpu", dtype=ember.float16):
            ember.mm(a, wb)  # bfloat16 source
        assert cache_size() == 0
        F.mse_loss(ember.randn(3, 4), wb)  # a float32 cast
        assert cache_size() == 0
        with ember.inference_mode():
            ember.mm(a, w)
        assert cache_size() == 0
        ember.mm(a, w)
        assert cache_size() == 1


def test_cached_cast_keeps_its_history_when_first_made_under_no_grad():
    a, w = ember.randn(2, 3), ember.randn(3, 4, requires_grad=True)
    with ember.autocast("cpu"):
        with ember.no_grad():
            z = ember.mm(a, w)
        assert not z.requires_grad and cache_size() == 1
        y = ember.mm(a, w)
        assert y.requires_grad and cast_node(y).name() == "ToCopyBackward0"
    y.sum().backward()
    assert w.grad is not None and w.grad.dtype == ember.float32
    np.testing.assert_allclose(w.grad.numpy(), np.repeat(a.numpy().sum(0)[:, None], 4, 1),
                               rtol=2e-2, atol=2e-2)


def test_nested_region_of_another_dtype_gets_its_own_cast():
    a, w = ember.randn(2, 3), ember.randn(3, 4, requires_grad=True)
    with ember.autocast("cpu"):
        assert ember.mm(a, w).dtype == ember.bfloat16
        with ember.autocast("cpu", dtype=ember.float16):
            assert ember.mm(a, w).dtype == ember.float16
        assert ember.mm(a, w).dtype == ember.bfloat16


def test_clear_autocast_cache():
    a, w = ember.randn(2, 3), ember.randn(3, 4, requires_grad=True)
    with ember.autocast("cpu"):
        c = cast_node(ember.mm(a, w))
        ember.clear_autocast_cache()
        assert cache_size() == 0
        assert cast_node(ember.mm(a, w)) is not c


# ---- gradients ----------------------------------------------------------------------------------


def test_gradients_reach_float32_leaves_in_float32():
    xs, ws, bs = data(4, 3), data(5, 3, seed=1), data(5, seed=2)
    x = ember.tensor(xs, requires_grad=True)
    w = ember.tensor(ws, requires_grad=True)
    b = ember.tensor(bs, requires_grad=True)
    with ember.autocast("cpu"):
        y = F.linear(x, w, b)
        loss = y.sum()
    assert y.dtype == ember.bfloat16
    loss.backward()
    for leaf in (x, w, b):
        assert leaf.grad.dtype == ember.float32
    np.testing.assert_allclose(w.grad.numpy(), np.repeat(xs.sum(0)[None], 5, 0), atol=5e-2)
    np.testing.assert_allclose(x.grad.numpy(), np.repeat(ws.sum(0)[None], 4, 0), atol=5e-2)
    np.testing.assert_allclose(b.grad.numpy(), np.full(5, 4.0))


def test_gradients_through_lower_and_float32_ops():
    x = ember.tensor(data(1, 2, 5, 5), requires_grad=True)
    w = ember.tensor(data(3, 2, 3, 3, seed=1) * 0.3, requires_grad=True)
    target = ember.tensor(data(1, 3, 3, 3, seed=2))
    with ember.autocast("cpu"):
        y = F.conv2d(x, w)
        loss = F.mse_loss(y, target)
    assert y.dtype == ember.bfloat16 and loss.dtype == ember.float32
    loss.backward()
    assert x.grad.dtype == ember.float32 and w.grad.dtype == ember.float32
    # Against the float32 computation (bfloat16 rounding: a loose tolerance).
    x2 = ember.tensor(data(1, 2, 5, 5), requires_grad=True)
    w2 = ember.tensor(data(3, 2, 3, 3, seed=1) * 0.3, requires_grad=True)
    F.mse_loss(F.conv2d(x2, w2), target).backward()
    np.testing.assert_allclose(w.grad.numpy(), w2.grad.numpy(), rtol=5e-2, atol=5e-2)
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=5e-2, atol=5e-2)


# ---- a training step ----------------------------------------------------------------------------


def _problem():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((64, 8)).astype(np.float32)
    W_true = rng.standard_normal((8, 3)).astype(np.float32)
    Y = (X @ W_true).argmax(1)
    W0 = (rng.standard_normal((3, 8)) * 0.1).astype(np.float32)
    return X, Y, W0, np.zeros(3, np.float32)


def train(lib, dtype_name, steps=20, autocast=True):
    X, Y, W0, B0 = _problem()
    model = lib.nn.Linear(8, 3)
    with lib.no_grad():
        model.weight.copy_(lib.tensor(W0))
        model.bias.copy_(lib.tensor(B0))
    opt = lib.optim.SGD(model.parameters(), lr=0.5)
    x, y = lib.tensor(X), lib.tensor(Y)
    losses, dtypes = [], set()
    for _ in range(steps):
        opt.zero_grad()
        with lib.autocast("cpu", dtype=getattr(lib, dtype_name), enabled=autocast):
            out = model(x)
            loss = lib.nn.functional.cross_entropy(out, y)
        loss.backward()
        dtypes.add((str(out.dtype).split(".")[-1], str(loss.dtype).split(".")[-1]))
        dtypes.update(str(p.grad.dtype).split(".")[-1] for p in model.parameters())
        opt.step()
        losses.append(loss.item())
    params = [p.detach().float().numpy().copy() for p in model.parameters()]
    return np.array(losses), dtypes, params, model


@pytest.mark.parametrize("lowp", LOWP)
def test_training_step_under_autocast(lowp):
    losses, dtypes, params, model = train(ember, lowp)
    assert dtypes == {(lowp, "float32"), "float32"}
    assert all(p.dtype == ember.float32 for p in model.parameters())
    assert losses[-1] < 0.5 * losses[0]
    reference, _, ref_params, _ = train(ember, lowp, autocast=False)
    np.testing.assert_allclose(losses, reference, atol=2e-2)
    for p, q in zip(params, ref_params):
        np.testing.assert_allclose(p, q, atol=3e-2)
    assert cache_size() == 0


# ---- parity with torch.autocast("cpu") (skipped without torch) ---------------------------------


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def both_dtypes(torch, case, autocast_dtype, input_dtype):
    """The result dtype name of `case` under autocast, in torch and in Ember."""
    with torch.autocast("cpu", dtype=getattr(torch, autocast_dtype)):
        t = case.run(torch, getattr(torch, input_dtype))
    with ember.autocast("cpu", dtype=getattr(ember, autocast_dtype)):
        e = case.run(ember, getattr(ember, input_dtype))
    return str(t.dtype).split(".")[-1], str(e.dtype).split(".")[-1]


PARITY = [c for c in LOWER + FP32 + FP32_OTHER + UNLISTED + PROMOTE + STATE_DTYPE if c.torch]


@pytest.mark.parametrize("lowp", LOWP)
@pytest.mark.parametrize("case", PARITY, ids=ids(PARITY))
def test_dtypes_match_torch(torch, case, lowp):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's deprecation warnings (torch.lu, ...)
        want, got = both_dtypes(torch, case, lowp, "float32")
        assert got == want
        if case.lowp_inputs:
            want, got = both_dtypes(torch, case, lowp, lowp)
            assert got == want


@pytest.mark.parametrize("lowp", LOWP)
@pytest.mark.parametrize("case,dtypes,want", PROMOTE_MIXED, ids=MIXED_IDS)
def test_promote_dtypes_match_torch(torch, case, dtypes, want, lowp):
    with torch.autocast("cpu", dtype=getattr(torch, lowp)):
        t = run_mixed(torch, case, dtypes, lowp)
    with ember.autocast("cpu", dtype=dt(lowp)):
        e = run_mixed(ember, case, dtypes, lowp)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]


@pytest.mark.parametrize("case", PROMOTE, ids=ids(PROMOTE))
def test_promote_refusals_match_torch(torch, case):
    for lib in (torch, ember):
        with lib.autocast("cpu"):
            with pytest.raises(RuntimeError):
                case.run(lib, lib.float16)


def test_recurrent_layer_dtypes_match_torch(torch):
    def dtypes(lib):
        from importlib import import_module

        pack = import_module(f"{lib.__name__}.nn.utils.rnn").pack_padded_sequence
        lib.manual_seed(0)
        x = lib.randn(5, 2, 3)
        got = []
        with lib.autocast("cpu"):
            for layer in (lib.nn.RNN(3, 4), lib.nn.GRU(3, 4, bidirectional=True),
                          lib.nn.LSTM(3, 4, proj_size=2),
                          lib.nn.LSTM(3, 4, proj_size=2, num_layers=2, bidirectional=True)):
                for inp in (x, pack(x, [5, 3])):
                    out, hidden = layer(inp)
                    out = out.data if inp is not x else out
                    hidden = hidden if isinstance(hidden, tuple) else (hidden,)
                    got.append([str(t.dtype).split(".")[-1] for t in (out, *hidden)])
            for cell in (lib.nn.RNNCell(3, 4), lib.nn.GRUCell(3, 4), lib.nn.LSTMCell(3, 4)):
                out = cell(x[0])
                got.append([str(t.dtype).split(".")[-1]
                            for t in (out if isinstance(out, tuple) else (out,))])
        return got

    assert dtypes(ember) == dtypes(torch)


@pytest.mark.parametrize("case", UNLISTED_FLOAT32_ONLY, ids=ids(UNLISTED_FLOAT32_ONLY))
def test_float32_only_dtypes_match_torch(torch, case):
    want, got = both_dtypes(torch, case, "bfloat16", "float32")
    assert got == want


def test_cache_matches_torch(torch):
    for lib in (torch, ember):
        a, w = lib.randn(2, 3), lib.randn(3, 4, requires_grad=True)
        with lib.autocast("cpu"):
            y1, y2 = lib.mm(a, w), lib.mm(a, w)
            n1, n2 = y1.grad_fn.next_functions[1][0], y2.grad_fn.next_functions[1][0]
            assert type(n1).__name__ == "ToCopyBackward0" or n1.name() == "ToCopyBackward0"
            assert n1 is n2
        with lib.autocast("cpu"):
            assert lib.mm(a, w).grad_fn.next_functions[1][0] is not n1
        with lib.autocast("cpu", cache_enabled=False):
            y3, y4 = lib.mm(a, w), lib.mm(a, w)
            assert y3.grad_fn.next_functions[1][0] is not y4.grad_fn.next_functions[1][0]


def test_state_functions_match_torch(torch):
    for lib in (torch, ember):
        assert lib.get_autocast_dtype("cpu") == lib.bfloat16
        assert lib.get_autocast_dtype("cuda") == lib.float16
        assert not lib.is_autocast_enabled("cpu") and not lib.is_autocast_enabled()
        assert lib.is_autocast_cache_enabled()
        with lib.autocast("cpu", dtype=lib.float16):
            assert lib.is_autocast_enabled("cpu") and lib.get_autocast_dtype("cpu") == lib.float16
            assert lib.autocast_increment_nesting() == 2
            assert lib.autocast_decrement_nesting() == 1
        with pytest.warns(UserWarning, match="CPU Autocast only supports dtypes of"):
            assert not lib.autocast("cpu", dtype=lib.float32)._enabled
        if lib.cuda.is_available():
            assert lib.autocast("cuda")._enabled
        else:
            with pytest.warns(UserWarning, match="CUDA is not available"):
                assert not lib.autocast("cuda")._enabled
        with pytest.warns(FutureWarning):
            assert not lib.cuda.amp.autocast(enabled=False)._enabled
        assert lib.amp.is_autocast_available("cpu")
        assert not lib.amp.is_autocast_available("xpu") or lib is torch


@pytest.mark.parametrize("lowp", LOWP)
def test_training_matches_torch(torch, lowp):
    got, got_dtypes, got_params, _ = train(ember, lowp)
    want, want_dtypes, want_params, _ = train(torch, lowp)
    assert got_dtypes == want_dtypes
    np.testing.assert_allclose(got, want, atol=1e-2)
    for p, q in zip(got_params, want_params):
        np.testing.assert_allclose(p, q, atol=1e-2)
