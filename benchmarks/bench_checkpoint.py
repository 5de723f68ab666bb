"""Checkpoint save and load (issue 16): a state_dict of about 500 MB (float32 matrices of a
transformer's shapes), written to and read from a file, by ember.save / ember.load and by
torch.save / torch.load (loads also with mmap=True), alternating in one process; with the raw
speed of the same bytes written by NumPy's tofile and read by fromfile, as the disk's (page
cache's) reference. Each timing is the median of `--repeat` runs; the file is deleted between
runs of a save.

    python benchmarks/bench_checkpoint.py [--mb 500] [--repeat 3] [--dir /tmp]
        [--json benchmarks/results/checkpoint.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time


def state_dict(lib, mb):
    """Layers of d_model 1024 (4 MB attention matrices, 16 MB feed-forward ones) up to ~mb."""
    sd, total, layer = {}, 0, 0
    gen = lib.Generator().manual_seed(0)
    while total < mb * 2**20:
        for name, shape in (("qkv", (3072, 1024)), ("out", (1024, 1024)), ("ff1", (4096, 1024)),
                            ("ff2", (1024, 4096)), ("norm", (1024,))):
            sd[f"layers.{layer}.{name}.weight"] = lib.randn(*shape, generator=gen)
            total += 4 * sd[f"layers.{layer}.{name}.weight"].numel()
        layer += 1
    return sd, total


def timed(fn, repeat, cleanup):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
        cleanup()
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mb", type=int, default=500)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--dir", default=tempfile.gettempdir())
    p.add_argument("--json", default=None)
    args = p.parse_args()
    import numpy as np

    import ember

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import environment

    try:
        import torch
    except ImportError:
        torch = None
    path = os.path.join(args.dir, "bench_checkpoint.pt")

    def remove():
        if os.path.exists(path):
            os.remove(path)

    esd, nbytes = state_dict(ember, args.mb)
    blob = np.concatenate([v.numpy().ravel() for v in esd.values()])
    results = {"bytes": nbytes}
    results["numpy_write_s"] = timed(lambda: blob.tofile(path), args.repeat, remove)
    blob.tofile(path)
    results["numpy_read_s"] = timed(lambda: np.fromfile(path, dtype=np.float32), args.repeat,
                                    lambda: None)
    remove()
    results["ember_save_s"] = timed(lambda: ember.save(esd, path), args.repeat, remove)
    ember.save(esd, path)
    results["ember_load_s"] = timed(lambda: ember.load(path), args.repeat, lambda: None)
    results["ember_load_mmap_s"] = timed(lambda: ember.load(path, mmap=True), args.repeat,
                                         lambda: None)
    remove()
    if torch is not None:
        tsd = {k: torch.from_numpy(v.numpy()) for k, v in esd.items()}
        results["torch_save_s"] = timed(lambda: torch.save(tsd, path), args.repeat, remove)
        torch.save(tsd, path)
        results["torch_load_s"] = timed(lambda: torch.load(path), args.repeat, lambda: None)
        results["torch_load_mmap_s"] = timed(lambda: torch.load(path, mmap=True), args.repeat,
                                             lambda: None)
        remove()
    for key in [k for k in results if k.endswith("_s")]:
        results[key[:-2] + "_gb_s"] = nbytes / results[key] / 1e9
    gb = nbytes / 1e9
    print(f"state_dict {gb:.2f} GB ({len(esd)} tensors) in {args.dir}")
    for key, value in results.items():
        if key.endswith("_s") and not key.endswith("gb_s"):
            print(f"  {key[:-2]:18s} {value:7.3f} s  {gb / value:6.2f} GB/s")
    if torch is not None:
        print(f"  ember/torch: save {results['ember_save_s'] / results['torch_save_s']:.2f}x, "
              f"load {results['ember_load_s'] / results['torch_load_s']:.2f}x "
              f"load mmap {results['ember_load_mmap_s'] / results['torch_load_mmap_s']:.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"environment": environment(), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
