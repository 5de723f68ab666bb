"""Distances and normalisation of ``torch.nn.functional``: normalize, cosine_similarity,
pairwise_distance (composites of public ops, so their gradients come from those ops)."""

import ember

__all__ = ["cosine_similarity", "normalize", "pairwise_distance"]


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p along dim, eps)."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return ember.div(input, denom, out=out)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps)) along dim, after broadcasting.

    As PyTorch, each input is divided by its own (clamped) norm before the product, which
    avoids overflow for large values."""
    if not x1.is_floating_point() and not x1.is_complex():
        x1 = x1.to(ember.get_default_dtype())
    if not x2.is_floating_point() and not x2.is_complex():
        x2 = x2.to(ember.get_default_dtype())
    x1, x2 = ember.broadcast_tensors(x1, x2)
    x1_norm = x1.norm(2, dim, keepdim=True).clamp_min(eps)
    x2_norm = x2.norm(2, dim, keepdim=True).clamp_min(eps)
    return ((x1 / x1_norm) * (x2 / x2_norm)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim (broadcasting)."""
    output_dim = max(x1.dim(), x2.dim())
    if output_dim == 0:
        return (x1 - x2 + eps).abs()
    return (x1 - x2 + eps).norm(p, output_dim - 1, keepdim=keepdim)
