"""Chart of the issue-16 benchmarks: checkpoint throughput (bench_checkpoint.py) and the
profiler's cost per call (bench_profiler.py), Ember next to PyTorch.

    python benchmarks/chart_tooling.py --checkpoint benchmarks/results/checkpoint.json \\
        --profiler benchmarks/results/profiler.json --chart docs/images/tooling.png
"""

from __future__ import annotations

import argparse
import json


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--profiler", required=True)
    parser.add_argument("--chart", required=True)
    options = parser.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(options.checkpoint) as f:
        ckpt = json.load(f)["results"]
    with open(options.profiler) as f:
        prof = json.load(f)["results"]

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2))
    groups = ["save", "load"]
    width = 0.27
    for i, (lib, color) in enumerate((("numpy", "#999999"), ("ember", "#d9541e"),
                                      ("torch", "#4c72b0"))):
        keys = {"numpy": ("numpy_write_gb_s", "numpy_read_gb_s"),
                "ember": ("ember_save_gb_s", "ember_load_gb_s"),
                "torch": ("torch_save_gb_s", "torch_load_gb_s")}[lib]
        values = [ckpt[k] for k in keys]
        label = {"numpy": "raw bytes (NumPy tofile/fromfile)", "ember": "ember.save/load",
                 "torch": "torch.save/load"}[lib]
        left.bar([x + (i - 1) * width for x in range(2)], values, width, label=label,
                 color=color)
    left.set_xticks(range(2), groups)
    left.set_ylabel("GB/s (higher is better)")
    left.set_title("0.55 GB state_dict, page cache")
    left.legend(fontsize=8)

    rows = [r for r in prof if r["name"].endswith("(profiling)")]
    names = [r["name"].replace(" (profiling)", "") for r in rows]
    off = {r["name"].replace(" (no profile)", ""): r["ember_s"] for r in prof
           if r["name"].endswith("(no profile)")}
    xs = range(len(rows))
    right.bar([x - width for x in xs], [off[n] * 1e6 for n in names], width,
              label="Ember, no profile", color="#f0a07a")
    right.bar(list(xs), [r["ember_s"] * 1e6 for r in rows], width, label="Ember, profiling",
              color="#d9541e")
    right.bar([x + width for x in xs], [r["ref_s"] * 1e6 for r in rows], width,
              label="PyTorch, profiling", color="#4c72b0")
    right.set_xticks(list(xs), names, rotation=15, fontsize=8)
    right.set_yscale("log")
    right.set_ylabel("us per call (lower is better)")
    right.set_title("Profiler cost per recorded call")
    right.legend(fontsize=8)
    fig.suptitle("AMD EPYC Zen 4, 2 cores, 1 thread")
    fig.tight_layout()
    fig.savefig(options.chart, dpi=110)


if __name__ == "__main__":
    main()
