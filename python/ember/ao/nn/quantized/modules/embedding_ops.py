"""Weight-only quantized embeddings (``torch.ao.nn.quantized.Embedding`` / ``EmbeddingBag``):
each row stored as 8-bit (quint8) or 4-bit (quint4x2) integers with its own scale and real zero
point, dequantized by the lookup itself; outputs are float32. State_dict layout as PyTorch's:
``_packed_params.dtype`` and ``_packed_params._packed_weight`` (the quantized weight)."""

import ember
from ember import nn

__all__ = ["Embedding", "EmbeddingBag", "EmbeddingPackedParams"]

_Q = ember._C._quantized
_DTYPES = (ember.quint8, ember.quint4x2)


class EmbeddingPackedParams(nn.Module):
    """The packed per-row quantized table of one Embedding / EmbeddingBag."""

    _version = 1

    def __init__(self, num_embeddings, embedding_dim, dtype=ember.quint8):
        super().__init__()
        if dtype not in _DTYPES:
            raise NotImplementedError(f"Unsupported dtype on quantized embedding! Supports "
                                      f"quint8 and quint4x2, got {dtype}")
        self.dtype = dtype
        scales = ember.ones(num_embeddings, dtype=ember.float32)
        zero_points = ember.zeros(num_embeddings, dtype=ember.float32)
        weight = ember.quantize_per_channel(
            ember.zeros((num_embeddings, embedding_dim)), scales, zero_points, 0, dtype)
        self.set_weight(weight)

    def set_weight(self, weight):
        if weight.dtype not in _DTYPES:
            raise NotImplementedError(f"Unsupported dtype for quantized embedding prepack! "
                                      f"Supports quint8 and quint4x2, got {weight.dtype}")
        self._packed_weight = _Q.embedding_bag_prepack(weight)

    def _weight(self):
        return self._packed_weight.unpack()

    def forward(self, x):
        return x

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "dtype"] = self.dtype
        destination[prefix + "_packed_weight"] = self._weight()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        self.dtype = state_dict.pop(prefix + "dtype", self.dtype)
        if prefix + "_packed_weight" in state_dict:
            self.set_weight(state_dict.pop(prefix + "_packed_weight"))
        else:
            missing_keys.append(prefix + "_packed_weight")
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys,
                                      unexpected_keys, error_msgs)

    def __repr__(self):
        return self._weight().__repr__()


def _weight_from_float(cls, mod):
    """The float module's weight quantized per row by its qconfig's weight observer."""
    from ember.ao.quantization.utils import quantize_weight

    qconfig = getattr(mod, "qconfig", None)
    if qconfig is None:
        raise RuntimeError(f"{cls.__name__}.from_float: the float module has no qconfig: set "
                           "float_qparams_weight_only_qconfig on it")
    observer = getattr(mod, "weight_fake_quant", None) or qconfig.weight()
    if observer.qscheme != ember.per_channel_affine_float_qparams:
        raise RuntimeError("Embedding quantization is only supported with "
                           "float_qparams_weight_only_qconfig.")
    if observer.dtype not in _DTYPES:
        raise RuntimeError(f"The only supported dtypes for quantized embeddings are quint8 and "
                           f"quint4x2, got {observer.dtype}")
    observer(mod.weight)
    return quantize_weight(mod.weight.detach().float(), observer), observer.dtype


class Embedding(nn.Module):
    """Embedding lookups in an 8-bit or 4-bit per-row quantized table; float32 outputs."""

    _version = 1
    _FLOAT_MODULE = nn.Embedding

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 dtype=ember.quint8):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.dtype = dtype
        self._packed_params = EmbeddingPackedParams(num_embeddings, embedding_dim, dtype)
        if _weight is not None:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError("Shape of _weight does not match num_embeddings and "
                                 "embedding_dim")
            self._packed_params.set_weight(_weight)

    def forward(self, indices):
        return _Q.embedding(self._packed_params._packed_weight, indices)

    def _get_name(self):
        return "QuantizedEmbedding"

    def __repr__(self):
        return (f"{self._get_name()}(num_embeddings={self.num_embeddings}, "
                f"embedding_dim={self.embedding_dim}, dtype={self._packed_params.dtype}, "
                f"qscheme={self.weight().qscheme()})")

    def set_weight(self, w):
        self._packed_params.set_weight(w)

    def weight(self):
        return self._packed_params._weight()

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        qweight, dtype = _weight_from_float(cls, mod)
        q = cls(mod.num_embeddings, mod.embedding_dim, dtype=dtype)
        q.set_weight(qweight)
        return q

    @classmethod
    def from_reference(cls, ref_embedding):
        q = cls(ref_embedding.num_embeddings, ref_embedding.embedding_dim,
                dtype=ref_embedding.weight_dtype)
        q.set_weight(ref_embedding.get_quantized_weight())
        return q


class EmbeddingBag(Embedding):
    """Sums, means or maxima of bags of rows of an 8-bit or 4-bit per-row quantized table."""

    _version = 1
    _FLOAT_MODULE = nn.EmbeddingBag
    _MODES = {"sum": 0, "mean": 1, "max": 2}

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2,
                 scale_grad_by_freq=False, mode="sum", sparse=False, _weight=None,
                 include_last_offset=False, dtype=ember.quint8, padding_idx=None):
        super().__init__(num_embeddings, embedding_dim, _weight=_weight, dtype=dtype)
        if mode not in self._MODES:
            raise ValueError(f"mode has to be one of sum, mean or max, got {mode!r}")
        self.mode = mode
        self.pruned_weights = False
        self.include_last_offset = include_last_offset
        self.padding_idx = padding_idx

    def forward(self, indices, offsets=None, per_sample_weights=None,
                compressed_indices_mapping=None):
        if compressed_indices_mapping is not None:
            raise NotImplementedError("QuantizedEmbeddingBag: pruned tables "
                                      "(compressed_indices_mapping) are not supported; pass the "
                                      "full table")
        return _Q.embedding_bag(self._packed_params._packed_weight, indices, offsets,
                                self._MODES[self.mode], per_sample_weights,
                                self.include_last_offset, self.padding_idx)

    def _get_name(self):
        return "QuantizedEmbeddingBag"

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        qweight, dtype = _weight_from_float(cls, mod)
        q = cls(mod.num_embeddings, mod.embedding_dim, max_norm=None, norm_type=2,
                scale_grad_by_freq=False, mode=mod.mode, sparse=False, _weight=None,
                include_last_offset=mod.include_last_offset, dtype=dtype,
                padding_idx=mod.padding_idx)
        q.set_weight(qweight)
        return q
