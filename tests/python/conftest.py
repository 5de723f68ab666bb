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
