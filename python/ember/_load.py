"""Loads the shared libraries the extension links against before `ember._C` is imported.

oneDNN comes from the PyPI package onednn-cpu-gomp, which installs libdnnl.so.3 under the
environment's lib/ directory rather than next to Ember, so the dynamic loader would not find it
through Ember's RPATH. Loading it here by absolute path makes the later NEEDED lookup succeed.

LAPACK (OpenBLAS) comes from the PyPI package scipy-openblas32 the same way:
``scipy_openblas32/lib/libscipy_openblas.so``. It is loaded RTLD_LOCAL: the NEEDED entry of
libember is satisfied by the already loaded library (the loader matches it by its soname), while
its ``scipy_*`` symbols stay out of the global scope, where they could interpose on the OpenBLAS
copy that SciPy bundles under the same symbol names.
"""

import ctypes
import importlib.util
import os
import sys


def _find_onednn():
    # Where pip puts the package's library (its data files go to the environment's lib/): a
    # stat instead of importlib.metadata, whose import alone took 50 ms of `import ember`.
    candidate = os.path.join(sys.prefix, "lib", "libdnnl.so.3")
    if os.path.isfile(candidate):
        return candidate
    import importlib.metadata

    try:
        dist = importlib.metadata.distribution("onednn-cpu-gomp")
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in dist.files or []:
        if os.path.basename(str(f)) == "libdnnl.so.3":
            return str(dist.locate_file(f))
    return None


def _find_openblas():
    spec = importlib.util.find_spec("scipy_openblas32")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(spec.submodule_search_locations[0], "lib", "libscipy_openblas.so")
    return path if os.path.isfile(path) else None


def preload():
    # Either falls back to the loader's search path when absent (a system copy); the import of
    # _C then fails clearly, naming the missing library.
    path = _find_onednn()
    if path is not None:
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    path = _find_openblas()
    if path is not None:
        ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
