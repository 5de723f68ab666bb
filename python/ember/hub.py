"""ember.hub: checkpoints fetched by URL into a local cache (``torch.hub``'s download half).

    state_dict = ember.hub.load_state_dict_from_url("https://.../resnet18-f37072fd.pth")

Files go to ``<hub dir>/checkpoints`` (``get_dir()``: ``$TORCH_HOME/hub``, else
``$XDG_CACHE_HOME/torch/hub``, else ``~/.cache/torch/hub``, as PyTorch's, so that both share
one cache); a file already there is not fetched again. Loading goes through ``ember.load``, so
PyTorch checkpoints load as Ember tensors and ``weights_only`` applies.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import tempfile
import urllib.parse
import urllib.request

__all__ = ["download_url_to_file", "get_dir", "load_state_dict_from_url", "set_dir"]

# A file name "<name>-<hex>.<ext>" carries the leading digits of its SHA-256 (PyTorch's rule).
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
_hub_dir = None


def get_dir():
    """The hub cache directory."""
    if _hub_dir is not None:
        return _hub_dir
    torch_home = os.environ.get("TORCH_HOME")
    if torch_home is None:
        cache = os.environ.get("XDG_CACHE_HOME", os.path.join(os.path.expanduser("~"), ".cache"))
        torch_home = os.path.join(cache, "torch")
    return os.path.join(os.path.expanduser(torch_home), "hub")


def set_dir(d):
    """Sets the hub cache directory for this process."""
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Downloads ``url`` to ``dst`` through a temporary file in the same directory (renamed
    into place only when complete), checking the SHA-256 against ``hash_prefix`` if given."""
    dst = os.path.expanduser(os.fspath(dst))
    directory = os.path.dirname(os.path.abspath(dst))
    os.makedirs(directory, exist_ok=True)
    request = urllib.request.Request(url, headers={"User-Agent": "ember.hub"})
    sha256 = hashlib.sha256() if hash_prefix is not None else None
    with urllib.request.urlopen(request) as response:  # noqa: S310 (the caller's URL)
        total = response.headers.get("Content-Length")
        total = int(total) if total is not None and total.isdigit() else None
        with tempfile.NamedTemporaryFile(delete=False, dir=directory) as out:
            try:
                done = 0
                while True:
                    chunk = response.read(1 << 20)
                    if not chunk:
                        break
                    out.write(chunk)
                    done += len(chunk)
                    if sha256 is not None:
                        sha256.update(chunk)
                    if progress:
                        shown = f"{done / 2**20:.1f} MiB" + (
                            f" of {total / 2**20:.1f} MiB" if total else "")
                        sys.stderr.write(f"\rDownloading {os.path.basename(dst)}: {shown}")
                if progress:
                    sys.stderr.write("\n")
                out.close()
                if sha256 is not None:
                    digest = sha256.hexdigest()
                    if not digest.startswith(hash_prefix):
                        raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got '
                                           f'"{digest}")')
                shutil.move(out.name, dst)
            finally:
                if os.path.exists(out.name):
                    os.remove(out.name)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=False):
    """Loads the checkpoint at ``url`` with ``ember.load``, downloading it into the cache
    (``model_dir``, default ``get_dir()/checkpoints``) unless it is there already.

    ``check_hash``: the file name's ``-<hex>.`` part must be a prefix of the file's SHA-256.
    """
    import ember

    if os.getenv("TORCH_MODEL_ZOO"):
        import warnings

        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead",
                      stacklevel=2)
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name or os.path.basename(urllib.parse.urlparse(url).path)
    if not filename:
        raise ValueError(f"load_state_dict_from_url: no file name in {url!r}; pass file_name=")
    cached = os.path.join(model_dir, filename)
    if not os.path.exists(cached):
        hash_prefix = None
        if check_hash:
            match = HASH_REGEX.search(filename)
            hash_prefix = match.group(1) if match else None
        download_url_to_file(url, cached, hash_prefix, progress=progress)
    return ember.load(cached, map_location=map_location, weights_only=weights_only)
