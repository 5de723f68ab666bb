import sys
from pathlib import Path

# opinfo.py and the opdb_*.py databases are imported as plain modules by the tests.
sys.path.insert(0, str(Path(__file__).parent))

# scripts/test.sh runs the tests against the development tree on PYTHONPATH (build/python). The
# editable install that scripts/setup-dev.sh makes puts an import hook in sys.meta_path, ahead of
# PYTHONPATH, that would serve its own binary instead: stale after every C++ edit until the next
# `pip install -e`. When a built ember package is on sys.path, the hook steps aside.
if any(Path(p, "ember").is_dir() and any(Path(p, "ember").glob("_C*.so")) for p in sys.path if p):
    sys.meta_path[:] = [f for f in sys.meta_path if not type(f).__module__.startswith("_editable_")]


# The PyTorch-parity tests are written against the PyTorch release in benchmarks/requirements.txt
# (2.15). Where PyTorch's behaviour changed since older releases (InstanceNorm's `bias`, LBFGS's
# `maximize`, clamp's gradient at ties, argmin's refusal of complex input, ...), Ember follows the
# newer one, so with an older torch (2.11 on the GPU machines) those tests would fail on
# PyTorch's side of the comparison. They skip instead, as without torch: `import torch` then
# fails, and pytest.importorskip("torch") skips.
def _torch_too_old(minimum=(2, 15)):
    import importlib.metadata
    import re

    try:
        version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return False
    numbers = re.match(r"(\d+)\.(\d+)", version)
    return numbers is not None and tuple(int(n) for n in numbers.groups()) < minimum


if _torch_too_old():
    sys.modules["torch"] = None  # type: ignore[assignment]
