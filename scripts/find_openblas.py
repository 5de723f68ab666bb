"""Print the directory holding OpenBLAS's CMake config from the PyPI package scipy-openblas32.

The package is a plain Python package (scipy_openblas32/ with include/, lib/ and
lib/cmake/openblas/OpenBLASConfig.cmake); it is located without being imported.
"""

import importlib.util
import os
import sys

spec = importlib.util.find_spec("scipy_openblas32")
if spec is None or not spec.submodule_search_locations:
    sys.exit("scipy-openblas32 is not installed: pip install scipy-openblas32")
root = spec.submodule_search_locations[0]
config = os.path.join(root, "lib", "cmake", "openblas")
if not os.path.isfile(os.path.join(config, "OpenBLASConfig.cmake")):
    sys.exit(f"scipy-openblas32 at {root} has no lib/cmake/openblas/OpenBLASConfig.cmake")
print(config)
