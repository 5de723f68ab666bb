"""Autograd engine overhead: forward + backward of graphs of tiny ops, where the engine's
per-node cost (recording, scheduling, accumulation) is all there is to measure.

Cases (as the autograd issue lists them):
- a 1000-op chain on a 1-element tensor (y = y * c + c, ..., then backward);
- a wide graph: 1000 independent branches of one leaf, summed;
- a 3-layer MLP (tanh) on a batch of 8 with 32 features, forward + backward.
Goal: Ember at most 0.7x PyTorch's time. Also reports the memory held per graph node.

    PYTHONPATH=build/python python benchmarks/bench_autograd.py
"""

from __future__ import annotations

import ctypes

import numpy as np

import ember
from common import REFERENCE, Bench, torch


def _chain(lib, x, c, n=1000):
    y = x
    for _ in range(n // 2):
        y = y * c
        y = y + c
    return y


def _wide(lib, x, n=1000):
    parts = [x * float(i % 7 + 1) for i in range(n)]
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return total


def _mlp(x, layers):
    h = x
    for w, b in layers:
        h = (h @ w + b).tanh()
    return h.sum()


def _make_mlp(lib, rng, dims, dtype):
    layers = []
    for i in range(len(dims) - 1):
        w = (rng.standard_normal((dims[i], dims[i + 1])) / np.sqrt(dims[i])).astype(np.float32)
        b = np.zeros(dims[i + 1], dtype=np.float32)
        layers.append((lib.tensor(w, requires_grad=True), lib.tensor(b, requires_grad=True)))
    return layers


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def _heap_in_use() -> int:
    """Bytes in use in the C heap (glibc mallinfo2: small blocks plus mmapped ones)."""
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = _MallInfo2
    info = libc.mallinfo2()
    return info.uordblks + info.hblkhd


def bytes_per_node(lib, n=100_000):
    """C-heap bytes a recorded chain of n ops on 1-element tensors holds, per graph node: the
    node, its saved tensors and the intermediate tensors it keeps alive."""
    import gc

    x = lib.ones(1, requires_grad=True)
    c = lib.tensor([1.0001])
    gc.collect()
    base = _heap_in_use()
    y = _chain(lib, x, c, n)
    held = _heap_in_use() - base
    del y
    return held / n


def run(threads=(1,), repeat=15):
    results = []
    if REFERENCE != "torch":
        print("bench_autograd needs PyTorch as the reference; skipped")
        return results
    rng = np.random.default_rng(0)
    ex, tx = ember.ones(1, requires_grad=True), torch.ones(1, requires_grad=True)
    ec, tc = ember.tensor([1.0001]), torch.tensor([1.0001])
    xb = rng.standard_normal((8, 32)).astype(np.float32)
    e_layers = _make_mlp(ember, rng, [32, 64, 64, 10], np.float32)
    t_layers = [(torch.tensor(w.detach().numpy(), requires_grad=True),
                 torch.tensor(b.detach().numpy(), requires_grad=True)) for w, b in e_layers]
    e_in, t_in = ember.tensor(xb), torch.tensor(xb)

    def e_chain():
        _chain(ember, ex, ec).sum().backward()

    def t_chain():
        _chain(torch, tx, tc).sum().backward()

    def e_wide():
        _wide(ember, ex).sum().backward()

    def t_wide():
        _wide(torch, tx).sum().backward()

    def e_mlp():
        _mlp(e_in, e_layers).backward()

    def t_mlp():
        _mlp(t_in, t_layers).backward()

    for n in threads:
        print(f"== autograd forward+backward, {n} thread(s), vs {REFERENCE}")
        bench = Bench(threads=n, repeat=repeat)
        bench.compare("chain of 1000 ops (1 element)", e_chain, t_chain)
        bench.compare("wide: 1000 branches summed", e_wide, t_wide)
        bench.compare("MLP 32-64-64-10, batch 8", e_mlp, t_mlp)
        results += bench.results
    e_node, t_node = bytes_per_node(ember), bytes_per_node(torch)
    print(f"memory per graph node (C heap held by a 100 000-op chain / 100 000): ember "
          f"{e_node:.0f} B, torch {t_node:.0f} B")
    for r in results:
        r.extra["bytes_per_node_ember"] = round(e_node)
        r.extra["bytes_per_node_torch"] = round(t_node)
    return results


def chart(results, path) -> None:
    """A bar chart of the ember / torch time ratios (docs/images/autograd.png)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no chart")
        return
    rows = [r for r in results if r.ratio is not None]
    fig, ax = plt.subplots(figsize=(7, 0.5 * len(rows) + 1.2))
    ys = list(range(len(rows)))[::-1]
    ax.barh(ys, [r.ratio for r in rows], color="#2a9d8f")
    ax.set_yticks(ys)
    ax.set_yticklabels([r.name for r in rows], fontsize=8)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.axvline(0.7, color="gray", linewidth=0.8, linestyle="--")
    for y, r in zip(ys, rows):
        ax.text(r.ratio, y, f" {r.ratio:.2f}", va="center", fontsize=8)
    ax.set_xlabel("time ratio ember / torch, forward + backward (dashed: goal 0.7)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"chart: {path}")


if __name__ == "__main__":
    import pathlib

    res = run()
    chart(res, pathlib.Path(__file__).resolve().parent.parent / "docs" / "images" / "autograd.png")
