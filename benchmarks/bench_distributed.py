"""ember.distributed against torch.distributed (gloo backend) on this machine, side by side in the
same processes: each of 2 processes (127.0.0.1, 1 thread each) joins a PyTorch gloo group and an
Ember group, and the two libraries alternate, block by block, on the same work.

- all_reduce (SUM, float32) of 1 KB to 256 MB: seconds per call and bandwidth (bytes / time);
  goal: Ember's bandwidth at least 0.9x PyTorch's (ratio ember / torch time <= 1.11).
- a DDP training step (forward, loss, zero_grad, backward with bucketed all-reduce, SGD step) of
  the 784-256-256-10 MLP and a small CNN, batch 64 per process; goal: time <= 1.0x PyTorch DDP.
- scaling: the same step in one process without DDP (rank 1 waits), and the efficiency
  2-process samples/s / (2 x 1-process samples/s), reported.

Ember's collectives check the ranks' arguments first (one small allgather: Note [Checking
collectives]); `--no-check` sets EMBER_DISTRIBUTED_CHECK=0 to time them without it.

    python benchmarks/bench_distributed.py [--json results/distributed.json] [--chart PNG]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

SIZES = [1 << 10, 16 << 10, 256 << 10, 4 << 20, 64 << 20, 256 << 20]
WORLD = 2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def block_seconds(fn, barrier, target_s):
    """Seconds per call over a block of about target_s, all ranks starting together."""
    fn()
    barrier()
    start = time.perf_counter()
    fn()
    one = max(time.perf_counter() - start, 1e-6)
    n = max(2, min(10000, int(target_s / one)))
    # every rank must run the same count: rank 0's decides
    n = broadcast_int(n)
    barrier()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def broadcast_int(value):
    import torch
    import torch.distributed as tdist

    t = torch.tensor([value], dtype=torch.int64)
    tdist.broadcast(t, src=0)
    return int(t.item())


def alternate(ember_fn, torch_fn, barrier, repeat, target_s):
    """Median seconds per call of each, alternating blocks."""
    e, t = [], []
    for _ in range(repeat):
        e.append(block_seconds(ember_fn, barrier, target_s))
        t.append(block_seconds(torch_fn, barrier, target_s))
    return statistics.median(e), statistics.median(t)


def mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                         nn.Linear(256, 10))


def cnn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(16 * 7 * 7, 10))


def training_step(lib, model, shape, ddp):
    import numpy as np

    g = np.random.default_rng(0)
    x = lib.from_numpy(g.standard_normal(shape).astype("float32"))
    y = lib.from_numpy(g.integers(0, 10, shape[0]).astype("int64"))
    net = model
    if ddp:
        net = lib.nn.parallel.DistributedDataParallel(model)
    opt = lib.optim.SGD(net.parameters(), lr=0.01)
    loss_fn = lib.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        opt.step()

    return step


def worker(args):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch
    import torch.distributed as tdist

    import ember
    import ember.distributed as edist
    from common import timed_block

    rank = int(os.environ["RANK"])
    torch.set_num_threads(1)
    ember.set_num_threads(1)
    base = int(os.environ["MASTER_PORT"])
    tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{base}", rank=rank,
                             world_size=WORLD)
    edist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{base + 1}", rank=rank,
                             world_size=WORLD)

    def barrier():
        tdist.barrier()
        edist.barrier()

    results = {"all_reduce": [], "ddp": [], "single": []}
    for size in SIZES:
        n = size // 4
        te = ember.ones(n)
        tt = torch.ones(n)
        target = 0.3 if size < (64 << 20) else 1.0
        e, t = alternate(lambda: edist.all_reduce(te), lambda: tdist.all_reduce(tt), barrier,
                         args.repeat, target)
        results["all_reduce"].append({"bytes": size, "ember_s": e, "torch_s": t})
        if rank == 0:
            print(f"  all_reduce {size:>10} B: ember {e * 1e6:9.1f} us  torch {t * 1e6:9.1f} us"
                  f"  ratio {e / t:.2f}", flush=True)
    for name, make, shape in (("mlp 784-256-256-10", mlp, (64, 784)),
                              ("cnn", cnn, (64, 1, 28, 28))):
        torch.manual_seed(0)
        ember.manual_seed(0)
        e_step = training_step(ember, make(ember), shape, ddp=True)
        t_step = training_step(torch, make(torch), shape, ddp=True)
        e, t = alternate(e_step, t_step, barrier, args.repeat, 0.5)
        results["ddp"].append({"name": name, "batch_per_process": shape[0], "ember_s": e,
                               "torch_s": t})
        if rank == 0:
            print(f"  DDP step {name}: ember {e * 1e3:.2f} ms  torch {t * 1e3:.2f} ms"
                  f"  ratio {e / t:.2f}", flush=True)
        # one process, no DDP: rank 0 times, rank 1 waits
        if rank == 0:
            e1_step = training_step(ember, make(ember), shape, ddp=False)
            t1_step = training_step(torch, make(torch), shape, ddp=False)
            e1, t1 = [], []
            for _ in range(args.repeat):
                e1.append(timed_block(e1_step, 0.5))
                t1.append(timed_block(t1_step, 0.5))
            results["single"].append({"name": name, "ember_s": statistics.median(e1),
                                      "torch_s": statistics.median(t1)})
        barrier()
    if rank == 0:
        with open(args.out, "w") as f:
            json.dump(results, f)
    tdist.destroy_process_group()
    edist.destroy_process_group()


def run(args):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import environment

    out = os.path.abspath(args.json) + ".rank0"
    port = free_port()
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE="2",
               OMP_NUM_THREADS="1")
    if args.no_check:
        env["EMBER_DISTRIBUTED_CHECK"] = "0"
    procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", "--out",
                               out, "--repeat", str(args.repeat)], env=dict(env, RANK=str(r)))
             for r in range(WORLD)]
    codes = [p.wait(timeout=3600) for p in procs]
    if any(codes):
        raise SystemExit(f"workers failed: {codes}")
    with open(out) as f:
        results = json.load(f)
    os.remove(out)
    for r in results["all_reduce"]:
        r["ratio"] = r["ember_s"] / r["torch_s"]
        r["ember_GBps"] = r["bytes"] / r["ember_s"] / 1e9
        r["torch_GBps"] = r["bytes"] / r["torch_s"] / 1e9
    for d, s in zip(results["ddp"], results["single"]):
        d["ratio"] = d["ember_s"] / d["torch_s"]
        for lib in ("ember", "torch"):
            two = WORLD * d["batch_per_process"] / d[f"{lib}_s"]
            one = d["batch_per_process"] / s[f"{lib}_s"]
            d[f"{lib}_scaling_efficiency"] = two / (WORLD * one)
            d[f"{lib}_single_s"] = s[f"{lib}_s"]
    del results["single"]
    results["environment"] = environment()
    results["argument_checks"] = not args.no_check
    print_table(results)
    with open(args.json, "w") as f:
        json.dump(results, f, indent=1)
    if args.chart:
        chart(results, args.chart)


def print_table(results):
    print("all_reduce, 2 processes, float32 SUM: ember / torch time (bandwidth GB/s)")
    for r in results["all_reduce"]:
        print(f"  {r['bytes']:>10} B  {r['ratio']:.2f}  (ember {r['ember_GBps']:.3f}, "
              f"torch {r['torch_GBps']:.3f})")
    print("DDP training step, 2 processes x 1 thread, batch 64 per process")
    for d in results["ddp"]:
        print(f"  {d['name']}: ember {d['ember_s'] * 1e3:.2f} ms, torch {d['torch_s'] * 1e3:.2f}"
              f" ms, ratio {d['ratio']:.2f}; scaling efficiency ember "
              f"{d['ember_scaling_efficiency']:.2f}, torch {d['torch_scaling_efficiency']:.2f}")


def chart(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    sizes = [r["bytes"] for r in results["all_reduce"]]
    a.plot(sizes, [r["ember_GBps"] for r in results["all_reduce"]], "o-", label="Ember (gloo)")
    a.plot(sizes, [r["torch_GBps"] for r in results["all_reduce"]], "s--", label="PyTorch (gloo)")
    a.set_xscale("log", base=2)
    a.set_yscale("log")
    a.set_xlabel("all_reduce size (bytes), 2 processes")
    a.set_ylabel("bandwidth (GB/s)")
    a.legend()
    names = [d["name"] for d in results["ddp"]]
    xs = range(len(names))
    b.bar([x - 0.2 for x in xs], [d["ember_s"] * 1e3 for d in results["ddp"]], 0.4,
          label="Ember DDP")
    b.bar([x + 0.2 for x in xs], [d["torch_s"] * 1e3 for d in results["ddp"]], 0.4,
          label="PyTorch DDP")
    b.set_xticks(list(xs))
    b.set_xticklabels(names)
    b.set_ylabel("ms per training step (batch 64 per process)")
    b.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"chart: {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-check", action="store_true",
                        help="time Ember without its argument checks (EMBER_DISTRIBUTED_CHECK=0)")
    parser.add_argument("--json", default="benchmarks/results/distributed.json")
    parser.add_argument("--chart", default=None)
    args = parser.parse_args()
    if args.worker:
        worker(args)
    else:
        run(args)


if __name__ == "__main__":
    main()
