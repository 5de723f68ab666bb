"""A random-call fuzzer for ember with PyTorch as the oracle (see README.md)."""
