"""Loads the shared libraries the extension links against before `ember._C` is imported.

oneDNN comes from the PyPI package onednn-cpu-gomp, which installs libdnnl.so.3 under the
environment's lib/ directory rather than next to Ember, so the dynamic loader would not find it
through Ember's RPATH. Loading it here by absolute path makes the later NEEDED lookup succeed.
"""

import ctypes
import importlib.metadata
import os


def _find_onednn():
    try:
        dist = importlib.metadata.distribution("onednn-cpu-gomp")
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in dist.files or []:
        if os.path.basename(str(f)) == "libdnnl.so.3":
            return str(dist.locate_file(f))
    return None


def preload():
    path = _find_onednn()
    if path is None:
        # Fall back to the loader's search path (a system oneDNN); import fails clearly if absent.
        return
    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
