"""The CUDA backend's first stage against PyTorch on the same GPU, timed alternately in one
process: copies host to device, device to host and device to device (contiguous, and a
transposed view that goes through the staged path), fills, and the cost of making a tensor on
the device. Every call ends with a synchronize of its own library, so the times are whole
operations. Copies report GB/s of the bytes moved; host memory is pageable on both sides.

    python benchmarks/bench_cuda.py [--mib 64] [--repeat 9] [--json benchmarks/results/cuda]

Without a GPU (or without PyTorch's CUDA build) it says so and exits.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=64, help="size of the copied tensors")
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--target-s", type=float, default=0.05)
    parser.add_argument("--json", help="write results to JSON_<gpu>.json")
    args = parser.parse_args()

    import torch

    import ember
    from common import Result, environment, format_result, measure

    if not (ember.cuda.is_available() and torch.cuda.is_available()):
        print("bench_cuda: needs a CUDA GPU for both Ember and PyTorch; nothing measured")
        return
    name = ember.cuda.get_device_name(0)
    print(f"GPU: {name} (torch {torch.__version__})")

    n = args.mib * (1 << 20) // 4
    rng = np.random.default_rng(0)
    host = rng.standard_normal(n, dtype=np.float32)
    side = int(np.sqrt(n))
    e_host, t_host = ember.from_numpy(host), torch.from_numpy(host)
    e_dev, t_dev = e_host.cuda(), t_host.cuda()
    e_dst, t_dst = ember.empty(n, device="cuda"), torch.empty(n, device="cuda")
    e_sq = ember.from_numpy(host[: side * side].reshape(side, side))
    t_sq = torch.from_numpy(host[: side * side].reshape(side, side))

    def synced(fn, sync):
        def call():
            fn()
            sync()

        return call

    es, ts = ember.cuda.synchronize, torch.cuda.synchronize
    nbytes = n * 4
    cases = [
        ("host to device", lambda: e_host.cuda(), lambda: t_host.cuda(), nbytes),
        ("device to host", lambda: e_dev.cpu(), lambda: t_dev.cpu(), nbytes),
        ("device to device copy_", lambda: e_dst.copy_(e_dev), lambda: t_dst.copy_(t_dev), nbytes),
        ("transposed host to device", lambda: e_sq.t().cuda(), lambda: t_sq.t().cuda(),
         side * side * 4),
        ("fill_", lambda: e_dst.fill_(1.5), lambda: t_dst.fill_(1.5), nbytes),
        ("zeros(1 MiB) on the device", lambda: ember.zeros(1 << 18, device="cuda"),
         lambda: torch.zeros(1 << 18, device="cuda"), 0),
        ("empty(4 KiB) on the device", lambda: ember.empty(1024, device="cuda"),
         lambda: torch.empty(1024, device="cuda"), 0),
    ]
    results = []
    for label, fe, ft, moved in cases:
        m_e, m_t = measure(synced(fe, es), synced(ft, ts), args.repeat, args.target_s, name=label)
        extra = {}
        if moved:
            extra = {"ember GB/s": moved / m_e.median / 1e9, "torch GB/s": moved / m_t.median / 1e9}
        r = Result(label, 1, m_e.median, m_t.median, extra=extra)
        print(format_result(r))
        results.append(r.as_dict())
    if args.json:
        tag = name.replace(" ", "_")
        info = environment() | {"gpu": name, "mib": args.mib}
        with open(f"{args.json}_{tag}.json", "w") as f:
            json.dump({"environment": info, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
