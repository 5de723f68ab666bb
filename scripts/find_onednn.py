"""Print the directory holding oneDNN's CMake config from the PyPI package onednn-devel-cpu-gomp.

pip installs the package's data files (include/, lib/) under the environment prefix, which in an
isolated build is a temporary overlay, so the location is read from the package's own file list.
"""

import importlib.metadata
import sys

try:
    dist = importlib.metadata.distribution("onednn-devel-cpu-gomp")
except importlib.metadata.PackageNotFoundError:
    sys.exit("onednn-devel-cpu-gomp is not installed: pip install onednn-devel-cpu-gomp")
for f in dist.files or []:
    if str(f).endswith("dnnl-config.cmake"):
        print(dist.locate_file(f).resolve().parent)
        break
else:
    sys.exit("onednn-devel-cpu-gomp has no dnnl-config.cmake")
