"""Loss functions (torch.nn.functional's), every `reduction` mode, PyTorch's legacy
`size_average` / `reduce` arguments, warnings and errors.

The hot losses are single C++ ops with a fused backward (csrc/ops/nn/loss*.cpp): cross_entropy
(log_softmax + nll in one op), nll_loss, mse_loss, l1_loss, smooth_l1_loss, huber_loss,
binary_cross_entropy[_with_logits] and ctc_loss. The others are short compositions of
differentiable public ops, as in PyTorch.

Under CPU autocast, the compositions that are on PyTorch's float32 list (kl_div,
poisson_nll_loss, margin_ranking_loss, cosine_embedding_loss, triplet_margin_loss) cast their
float16 / bfloat16 tensor arguments to float32 first, as the C++ losses do in their public
functions (csrc/api/autocast.h); gaussian_nll_loss is on no list (a Python function in PyTorch
too) and runs in its inputs' dtype.
"""

import math
import warnings

import ember

_nn = ember._C._nn
# autocast's state for a device type: one call, all a loss pays while autocast is off.
_autocast_enabled = ember._C._autocast.is_enabled
_LOWER_PRECISION = (ember.float16, ember.bfloat16)

__all__ = [
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cosine_embedding_loss",
    "cross_entropy",
    "ctc_loss",
    "gaussian_nll_loss",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "margin_ranking_loss",
    "mse_loss",
    "nll_loss",
    "poisson_nll_loss",
    "smooth_l1_loss",
    "triplet_margin_loss",
]


class _Reduction:
    @staticmethod
    def get_enum(reduction):
        if reduction == "none":
            return 0
        if reduction == "mean":
            return 1
        if reduction == "elementwise_mean":
            warnings.warn(
                "reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
                stacklevel=3,
            )
            return 1
        if reduction == "sum":
            return 2
        raise ValueError(f"{reduction} is not a valid value for reduction")

    @staticmethod
    def legacy_get_string(size_average, reduce, emit_warning=True):
        if size_average is None:
            size_average = True
        if reduce is None:
            reduce = True
        if size_average and reduce:
            ret = "mean"
        elif reduce:
            ret = "sum"
        else:
            ret = "none"
        if emit_warning:
            warnings.warn(
                f"size_average and reduce args will be deprecated, please use reduction='{ret}' "
                "instead.",
                stacklevel=3,
            )
        return ret

    @staticmethod
    def legacy_get_enum(size_average, reduce, emit_warning=True):
        return _Reduction.get_enum(_Reduction.legacy_get_string(size_average, reduce, emit_warning))


def _autocast_fp32(*tensors):
    """Autocast's float32 policy (autocast::to_fp32 in csrc/api/autocast.h): float16 and
    bfloat16 CPU tensors converted to float32 by the recorded conversion (ToCopyBackward0, so
    their gradients come back in their own dtype); anything else (float32, float64, integer
    tensors, None, numbers) as it is. Call it only when _autocast_enabled("cpu")."""
    return tuple(
        t.float()
        if isinstance(t, ember.Tensor) and t.dtype in _LOWER_PRECISION and t.device.type == "cpu"
        else t
        for t in tensors
    )


def _reduction_enum(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return _Reduction.legacy_get_enum(size_average, reduce)
    return _Reduction.get_enum(reduction)


def _reduction_string(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return _Reduction.legacy_get_string(size_average, reduce)
    return reduction


def _apply_reduction(loss, reduction):
    enum = _Reduction.get_enum(reduction) if isinstance(reduction, str) else reduction
    if enum == 1:
        return loss.mean()
    if enum == 2:
        return loss.sum()
    return loss


def _warn_size_mismatch(input, target):
    if target.size() != input.size():
        warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input size "
            f"({input.size()}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            stacklevel=3,
        )


def _weighted(loss, weight, input, reduction, mean_by_weight):
    """PyTorch's per-element `weight` for mse / l1 / huber: loss * weight, then the reduction
    ('mean' divides by the sum of the weights for mse and l1, by the count for huber)."""
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    weighted = loss * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return ember.sum(weighted)
    if reduction == "mean":
        return ember.sum(weighted) / ember.sum(weight) if mean_by_weight else weighted.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


# ---- regression losses -------------------------------------------------------------------------


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error (x - y)^2."""
    _warn_size_mismatch(input, target)
    reduction = _reduction_string(size_average, reduce, reduction)
    ex, et = ember.broadcast_tensors(input, target)
    if weight is not None:
        return _weighted(_nn.mse_loss(ex, et, 0), weight, input, reduction, True)
    return _nn.mse_loss(ex, et, _Reduction.get_enum(reduction))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error |x - y|."""
    _warn_size_mismatch(input, target)
    reduction = _reduction_string(size_average, reduce, reduction)
    ex, et = ember.broadcast_tensors(input, target)
    if weight is not None:
        return _weighted(_nn.l1_loss(ex, et, 0), weight, input, reduction, True)
    return _nn.l1_loss(ex, et, _Reduction.get_enum(reduction))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 (x - y)^2 / beta where |x - y| < beta, |x - y| - 0.5 beta elsewhere."""
    _warn_size_mismatch(input, target)
    reduction = _reduction_string(size_average, reduce, reduction)
    ex, et = ember.broadcast_tensors(input, target)
    if beta == 0.0:
        return _nn.l1_loss(ex, et, _Reduction.get_enum(reduction))
    return _nn.smooth_l1_loss(ex, et, _Reduction.get_enum(reduction), beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 (x - y)^2 where |x - y| < delta, delta (|x - y| - 0.5 delta) elsewhere."""
    _warn_size_mismatch(input, target)
    ex, et = ember.broadcast_tensors(input, target)
    if weight is None:
        return _nn.huber_loss(ex, et, _Reduction.get_enum(reduction), delta)
    return _weighted(_nn.huber_loss(ex, et, 0, delta), weight, input, reduction, False)


# ---- classification losses ---------------------------------------------------------------------


def nll_loss(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index=-100,
    reduce=None,
    reduction="mean",
):
    """Negative log-likelihood of class-index targets given log-probabilities (N, C, ...)."""
    enum = _reduction_enum(size_average, reduce, reduction)
    return _nn.nll_loss_nd(input, target, weight, enum, ignore_index)


def cross_entropy(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index=-100,
    reduce=None,
    reduction="mean",
    label_smoothing=0.0,
):
    """log_softmax + nll_loss as one fused op. `target`: class indices (N, d1, ...) or class
    probabilities of input's shape."""
    enum = _reduction_enum(size_average, reduce, reduction)
    return _nn.cross_entropy_loss(input, target, weight, enum, ignore_index, label_smoothing)


def binary_cross_entropy(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean"
):
    """-w (y log x + (1 - y) log(1 - x)), the logs clamped at -100."""
    enum = _reduction_enum(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(
            f"Using a target size ({target.size()}) that is different to the input size "
            f"({input.size()}) is deprecated. Please ensure they have the same size."
        )
    if weight is not None:
        weight = weight.expand(ember.broadcast_shapes(target.size(), weight.size()))
    return _nn.binary_cross_entropy(input, target, weight, enum)


def binary_cross_entropy_with_logits(
    input,
    target,
    weight=None,
    size_average=None,
    reduce=None,
    reduction="mean",
    pos_weight=None,
):
    """binary_cross_entropy(sigmoid(x), y) computed stably from the logits x; pos_weight
    weights the positive term."""
    enum = _reduction_enum(size_average, reduce, reduction)
    if not (target.size() == input.size()):
        raise ValueError(
            f"Target size ({target.size()}) must be the same as input size ({input.size()})"
        )
    return ember.binary_cross_entropy_with_logits(input, target, weight, pos_weight, enum)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Kullback-Leibler divergence of `target` from `input` (log-probabilities):
    target * (log(target) - input), or exp(target) * (target - input) when log_target."""
    if _autocast_enabled("cpu"):  # autocast: float32
        input, target = _autocast_fp32(input, target)
    if size_average is not None or reduce is not None:
        enum = _Reduction.legacy_get_enum(size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support "
                "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
                "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
                "major release.",
                stacklevel=2,
            )
        enum = _Reduction.get_enum("sum" if reduction == "batchmean" else reduction)
    if log_target:
        loss = ember.exp(target) * (target - input)
    else:
        loss = ember.xlogy(target, target) - target * input
    reduced = _apply_reduction(loss, enum)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced


# ---- embedding / ranking losses (compositions, as PyTorch) -----------------------------------


def cosine_embedding_loss(
    input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"
):
    """1 - cos(x1, x2) for target 1, max(0, cos(x1, x2) - margin) for target -1."""
    if _autocast_enabled("cpu"):  # autocast: float32
        input1, input2, target = _autocast_fp32(input1, input2, target)
    enum = _reduction_enum(size_average, reduce, reduction)
    tdim = target.dim()
    if tdim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if tdim == 1 and (input1.dim() != 2 or input2.dim() != 2):
        raise RuntimeError(
            "1D target tensor expects 2D input tensors, but found inputs with sizes "
            f"{list(input1.size())} and {list(input2.size())}."
        )
    if tdim == 0 and (input1.dim() != 1 or input2.dim() != 1):
        raise RuntimeError(
            "0D target tensor expects 1D input tensors, but found inputs with sizes "
            f"{list(input1.size())} and {list(input2.size())}."
        )
    eps = 1e-12
    prod_sum = (input1 * input2).sum(tdim)
    mag1 = (input1 * input1).sum(tdim) + eps
    mag2 = (input2 * input2).sum(tdim) + eps
    cos = prod_sum / ember.sqrt(mag1 * mag2)
    zeros = ember.zeros_like(cos)
    pos = 1 - cos
    neg = ember.clamp_min(cos - margin, 0)
    output = ember.where(target == 1, pos, zeros) + ember.where(target == -1, neg, zeros)
    return _apply_reduction(output, enum)


def margin_ranking_loss(
    input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"
):
    """max(0, -y (x1 - x2) + margin)."""
    if _autocast_enabled("cpu"):  # autocast: float32
        input1, input2, target = _autocast_fp32(input1, input2, target)
    enum = _reduction_enum(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} "
        )
    output = ember.clamp_min(-target * (input1 - input2) + margin, 0)
    return _apply_reduction(output, enum)


def _pairwise_distance(x1, x2, p, eps):
    dim = max(x1.dim(), x2.dim()) - 1
    return ember.norm(x1 - x2 + eps, p, dim, False)


def triplet_margin_loss(
    anchor,
    positive,
    negative,
    margin=1.0,
    p=2,
    eps=1e-6,
    swap=False,
    size_average=None,
    reduce=None,
    reduction="mean",
):
    """max(0, d(a, p) - d(a, n) + margin) with the p-norm distance d; `swap` uses
    min(d(a, n), d(p, n))."""
    if _autocast_enabled("cpu"):  # autocast: float32
        anchor, positive, negative = _autocast_fp32(anchor, positive, negative)
    enum = _reduction_enum(size_average, reduce, reduction)
    a_dim, p_dim, n_dim = anchor.dim(), positive.dim(), negative.dim()
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D "
            "inputs"
        )
    dist_pos = _pairwise_distance(anchor, positive, p, eps)
    dist_neg = _pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = ember.minimum(dist_neg, _pairwise_distance(positive, negative, p, eps))
    output = ember.clamp_min(margin + dist_pos - dist_neg, 0)
    return _apply_reduction(output, enum)


# ---- likelihood losses -------------------------------------------------------------------------


def ctc_loss(
    log_probs,
    targets,
    input_lengths,
    target_lengths,
    blank=0,
    reduction="mean",
    zero_infinity=False,
):
    """Connectionist Temporal Classification loss of log_probs (T, N, C) (or (T, C)) against
    padded (N, S) or concatenated targets. 'mean' divides each loss by its target length."""
    return ember.ctc_loss(
        log_probs,
        targets,
        input_lengths,
        target_lengths,
        blank,
        _Reduction.get_enum(reduction),
        zero_infinity,
    )


def poisson_nll_loss(
    input,
    target,
    log_input=True,
    full=False,
    size_average=None,
    eps=1e-8,
    reduce=None,
    reduction="mean",
):
    """exp(x) - y x (log_input) or x - y log(x + eps); `full` adds Stirling's term."""
    if _autocast_enabled("cpu"):  # autocast: float32
        input, target = _autocast_fp32(input, target)
    reduction = _reduction_string(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = ember.exp(input) - target * input
    else:
        loss = input - target * ember.log(input + eps)
    if full:
        stirling = target * ember.log(target) - target + 0.5 * ember.log(2 * math.pi * target)
        loss = loss + ember.where(target <= 1, ember.zeros_like(stirling), stirling)
    return _apply_reduction(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """0.5 (log(var) + (x - y)^2 / var), var clamped at eps; `full` adds 0.5 log(2 pi)."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ember.ones_like(input)
    elif bool(ember.any(var < 0)):
        raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = ember.unsqueeze(var, -1)
        elif input.dim() == var.dim() and (
            sum(y for x, y in zip(input.size(), var.size()) if x != y) == 1
        ):
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with ember.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (ember.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _apply_reduction(loss, reduction)
