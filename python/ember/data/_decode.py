"""Field decoders, as WebDataset's ``autodecode``: each field of a sample is decoded by the first
handler, called with the field's extension (``".jpg"``) and bytes, that returns something other
than None; fields no handler takes stay bytes.

Built in: ``.gz`` (inflated, then decoded by the inner extension), txt/text/transcript (str),
cls/cls2/index/inx/id (int), json/jsn, npy (NumPy array, header parsed in C++), npz (dict of
arrays), safetensors (dict of Ember tensors), pth (``ember.load``, which never runs code),
mp/msg (msgpack, when installed) and images. JPEGs are decoded in C++ by libjpeg-turbo with PIL's
settings (the same pixels as PIL); other image formats, and the ``pil*`` specs, go through Pillow.

Pickled fields (pyd, pickle, pkl) are unpickled only with ``allow_pickle=True``: unpickling runs
code chosen by whoever wrote the shard. Without it they stay bytes, with a warning.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import warnings
from functools import partial

import numpy as np

from .. import _C

__all__ = ["Decoder", "DecodingError", "Continue", "imagehandler", "handle_extension",
           "basichandlers", "gzfilter", "IMAGE_EXTENSIONS", "imagespecs"]

IMAGE_EXTENSIONS = ["jpg", "jpeg", "png", "ppm", "pgm", "pbm", "pnm", "bmp", "gif", "tif",
                    "tiff", "webp"]
_JPEG = {"jpg", "jpeg"}

# spec -> (array kind, element type, mode), as WebDataset's imagespecs.
imagespecs = {
    "l8": ("numpy", "uint8", "l"), "rgb8": ("numpy", "uint8", "rgb"),
    "rgba8": ("numpy", "uint8", "rgba"), "l": ("numpy", "float", "l"),
    "rgb": ("numpy", "float", "rgb"), "rgba": ("numpy", "float", "rgba"),
    "torchl8": ("torch", "uint8", "l"), "torchrgb8": ("torch", "uint8", "rgb"),
    "torchrgba8": ("torch", "uint8", "rgba"), "torchl": ("torch", "float", "l"),
    "torchrgb": ("torch", "float", "rgb"), "torch": ("torch", "float", "rgb"),
    "torchrgba": ("torch", "float", "rgba"), "pill": ("pil", None, "l"),
    "pil": ("pil", None, "rgb"), "pilrgb": ("pil", None, "rgb"), "pilrgba": ("pil", None, "rgba"),
}
# Ember's own names for the tensor specs.
for _mode in ("l", "rgb", "rgba"):
    imagespecs["ember" + _mode] = imagespecs["torch" + _mode]
    imagespecs["ember" + _mode + "8"] = imagespecs["torch" + _mode + "8"]


class DecodingError(Exception):
    """A field failed to decode; ``url``, ``key`` and ``k`` (the field) say which."""

    def __init__(self, url=None, key=None, k=None, sample=None):
        super().__init__(f"decoding field {k!r} of sample {key!r} from {url}")
        self.url, self.key, self.k, self.sample = url, key, k, sample


class Continue:
    """Returned by a handler to pass modified (key, data) on to the next handlers."""

    def __init__(self, key, data):
        self.key, self.data = key, data


def _extension(key):
    return re.sub(r".*[.]", "", key).lower()


def _npy(data):
    array = _C._data.decode_npy(data)
    if array is None:  # structured dtypes: NumPy's own reader, still without pickle
        array = np.load(io.BytesIO(data), allow_pickle=False)
    return array


def _npz(data):
    with np.load(io.BytesIO(data), allow_pickle=False) as archive:
        return {k: archive[k] for k in archive.files}


def _safetensors(data):
    import ember

    return ember.load(io.BytesIO(data))


def _pth(data):
    import ember

    return ember.load(io.BytesIO(data))


def _msgpack(data):
    import msgpack

    return msgpack.unpackb(data, raw=False)


_BASIC = {
    "txt": lambda data: data.decode("utf-8"),
    "text": lambda data: data.decode("utf-8"),
    "transcript": lambda data: data.decode("utf-8"),
    "cls": int, "cls2": int, "index": int, "inx": int, "id": int,
    "json": json.loads, "jsn": json.loads,
    "npy": _npy, "npz": _npz, "safetensors": _safetensors, "pth": _pth,
    "mp": _msgpack, "msg": _msgpack,
}
_PICKLED = {"pyd", "pickle", "pkl"}
_warned_pickle: set = set()


def basichandlers(key, data):
    """The default decoders by extension (see the module docstring)."""
    decoder = _BASIC.get(_extension(key))
    return decoder(data) if decoder is not None else None


def _pickle_handler(allow, key, data):
    ext = _extension(key)
    if ext not in _PICKLED:
        return None
    if allow:
        import pickle

        return pickle.loads(data)
    if ext not in _warned_pickle:
        _warned_pickle.add(ext)
        warnings.warn(f"ember.data: .{ext} fields are pickled and stay bytes; unpickling runs "
                      "code from the shard, so it happens only with decode(..., "
                      "allow_pickle=True)", stacklevel=4)
    return data


def gzfilter(key, data):
    """Inflates ``.gz`` fields and decodes them by their inner extension."""
    if not key.endswith(".gz"):
        return None
    return Continue(key[:-3], gzip.decompress(data))


class _ExtensionHandler:
    def __init__(self, extensions, f):
        self.wanted, self.f = extensions.lower().split(), f

    def __call__(self, key, data):
        key = key.lower()
        for target in self.wanted:
            if key == "." + target or key.endswith("." + target):
                return self.f(data)
        return None


def handle_extension(extensions, f):
    """A handler that applies ``f(data)`` to fields whose extension is one of ``extensions``
    (a space-separated string; multi-part extensions like ``"seg.png"`` match the end)."""
    return _ExtensionHandler(extensions, f)


class ImageHandler:
    """Decodes images by ``imagespec`` (WebDataset's names: ``"rgb8"``, ``"torchrgb"``,
    ``"pil"``, ...; ``"emberrgb"`` is the same as ``"torchrgb"``). numpy specs give HWC arrays,
    torch/ember specs CHW Ember tensors; float specs are in [0, 1]."""

    def __init__(self, imagespec, extensions=IMAGE_EXTENSIONS):
        if imagespec not in imagespecs:
            raise ValueError(f"unknown image spec {imagespec!r}; one of {sorted(imagespecs)}")
        self.imagespec = imagespec
        self.extensions = {e.lower() for e in extensions}

    def jpeg_spec(self, ext):
        """(mode, as_float, as_tensor) when a field with extension ``ext`` is decoded by the C++
        JPEG path, else None."""
        kind, etype, mode = imagespecs[self.imagespec]
        if kind == "pil" or ext not in _JPEG or ext not in self.extensions:
            return None
        return mode, etype == "float", kind == "torch"

    def __call__(self, key, data):
        ext = _extension(key)
        if ext not in self.extensions:
            return None
        kind, etype, mode = imagespecs[self.imagespec]
        if kind != "pil" and ext in _JPEG:
            array = _C._data.decode_jpeg(data, mode, etype == "float", kind == "torch")
            if array is not None:
                return _as_tensor(array) if kind == "torch" else array
        image = _pil_open(data, mode)
        if kind == "pil":
            return image
        array = np.asarray(image)
        if etype == "float":
            array = array.astype(np.float32) / np.float32(255.0)
        if kind == "torch":
            if array.ndim == 3:
                array = array.transpose(2, 0, 1)
            return _as_tensor(np.array(array, order="C"))  # a writable copy
        return array


def _pil_open(data, mode):
    try:
        import PIL.Image
    except ImportError:
        raise ImportError("decoding this image needs Pillow: pip install pillow") from None
    with io.BytesIO(data) as stream:
        image = PIL.Image.open(stream)
        image.load()
        return image.convert(mode.upper())


def _as_tensor(array):
    import ember

    return ember.from_numpy(array)


def imagehandler(imagespec, extensions=IMAGE_EXTENSIONS):
    return ImageHandler(imagespec, extensions)


def _pickle_step(allow):
    return partial(_pickle_handler, allow)


class Decoder:
    """Decodes whole samples with a list of handlers (see the module docstring). ``only``
    limits decoding to some fields; ``partial`` leaves fields that are not bytes alone;
    ``allow_pickle`` lets pickled fields be unpickled."""

    def __init__(self, handlers, pre=None, post=None, only=None, partial=False, allow_pickle=False):
        if not isinstance(handlers, list):
            raise TypeError(f"handlers must be a list, got {type(handlers).__name__}")
        if isinstance(only, str):
            only = only.split()
        self.only = None if only is None else set(only)
        pre = [gzfilter] if pre is None else list(pre)
        post = [basichandlers] if post is None else list(post)
        for h in pre + handlers + post:
            if not callable(h):
                raise TypeError(f"decoder handler {h!r} is not callable")
        self.handlers = pre + handlers + post + [_pickle_step(allow_pickle)]
        self.partial = partial
        self._plans = {}

    def _plan(self, key):
        """The handlers that may take fields named ``key``: the built-in ones are skipped for
        extensions they ignore, so a field costs one call, not a regex per handler."""
        ext = _extension(key)
        steps = []
        for h in self.handlers:
            if h is gzfilter:
                if key.endswith(".gz"):
                    steps.append(h)
            elif h is basichandlers:
                f = _BASIC.get(ext)
                if f is not None:
                    steps.append(lambda _key, data, f=f: f(data))
            elif isinstance(h, ImageHandler):
                if ext in h.extensions:
                    steps.append(h)
            elif isinstance(h, partial) and h.func is _pickle_handler:
                if ext in _PICKLED:
                    steps.append(h)
            else:
                steps.append(h)
        self._plans[key] = steps
        return steps

    def __getstate__(self):  # the plans hold lambdas; they are rebuilt on use
        state = dict(self.__dict__)
        state["_plans"] = {}
        return state

    def decode1(self, key, data):
        key = "." + key
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plan(key)
        for f in plan:
            result = f(key, data)
            if isinstance(result, Continue):  # e.g. .npy.gz inflated: decode it as .npy
                inner = result.key[1:] if result.key.startswith(".") else result.key
                return self.decode1(inner, result.data)
            if result is not None:
                return result
        return data

    def _jpeg_spec(self, k):
        """The C++ JPEG path's (mode, as_float, as_tensor) when it is the first handler a field
        named ``k`` meets (so what it returns is what decode1 would), else None."""
        key = "." + k
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plan(key)
        first = plan[0] if plan else None
        return first.jpeg_spec(_extension(key)) if isinstance(first, ImageHandler) else None

    def decodes_jpegs(self) -> bool:
        """Whether some handler takes JPEGs by the C++ path (worth decoding them in groups)."""
        return any(isinstance(h, ImageHandler) and h.jpeg_spec("jpg") for h in self.handlers)

    def decode_jpegs_together(self, samples):
        """For each of ``samples``, {field: decoded value} for its JPEG fields, decoded in one
        call that spreads them over Ember's threads. A field missing from the dict (not a JPEG
        the C++ path takes, or a corrupt one) is decoded by decode() as usual, which also raises
        its error there, in order."""
        groups = {}  # spec -> [(sample number, field, bytes)]
        for i, sample in enumerate(samples):
            if not isinstance(sample, dict):
                continue
            for k, v in sample.items():
                if k.startswith("__") or type(v) is not bytes or \
                        (self.only is not None and k not in self.only):
                    continue
                spec = self._jpeg_spec(k)
                if spec is not None:
                    groups.setdefault(spec, []).append((i, k, v))
        ready = [{} for _ in samples]
        for (mode, as_float, as_tensor), jobs in groups.items():
            arrays = _C._data.decode_jpegs([data for _, _, data in jobs], mode, as_float,
                                           as_tensor)
            for (i, k, _), array in zip(jobs, arrays):
                if array is not None:
                    ready[i][k] = _as_tensor(array) if as_tensor else array
        return ready

    def decode(self, sample, ready=None):
        """The decoded sample; ``ready`` holds fields decoded already (decode_jpegs_together)."""
        if not isinstance(sample, dict):
            raise TypeError(f"decode needs dict samples, got {type(sample).__name__}")
        result = {}
        for k, v in sample.items():
            try:
                if ready and k in ready:
                    result[k] = ready[k]
                elif k.startswith("__"):
                    result[k] = v.decode("utf-8") if isinstance(v, bytes) else v
                elif (self.only is not None and k not in self.only) or \
                        (self.partial and not isinstance(v, (bytes, bytearray))):
                    result[k] = v
                else:
                    if not isinstance(v, (bytes, bytearray)):
                        raise TypeError(f"field {k!r} is {type(v).__name__}, not bytes (use "
                                        "partial=True to leave decoded fields alone)")
                    result[k] = self.decode1(k, v)
            except Exception as exn:
                raise DecodingError(url=sample.get("__url__"), key=sample.get("__key__"), k=k,
                                    sample=sample) from exn
        return result

    __call__ = decode
