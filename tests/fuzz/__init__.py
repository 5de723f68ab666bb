"""A random-call fuzzer for ember with PyTorch as the oracle (see README.md)."""

import sys
from pathlib import Path

# Fuzz the ember that PYTHONPATH names (build/python): an editable install's import hook sits
# ahead of PYTHONPATH in sys.meta_path and would serve its own binary instead (as in
# tests/python/conftest.py). Every process of the fuzzer imports this package first.
if any(Path(p, "ember").is_dir() and any(Path(p, "ember").glob("_C*.so")) for p in sys.path if p):
    sys.meta_path[:] = [f for f in sys.meta_path if not type(f).__module__.startswith("_editable_")]
