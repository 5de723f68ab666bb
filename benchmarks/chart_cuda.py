"""Chart of bench_cuda.py: Ember's time over PyTorch's for each CUDA case (below 1: Ember is
faster), on one GPU.

    python benchmarks/chart_cuda.py --results benchmarks/results/cuda_NVIDIA_H200.json \\
        --chart docs/images/cuda.png
"""

from __future__ import annotations

import argparse
import json


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", required=True)
    parser.add_argument("--chart", required=True)
    options = parser.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(options.results) as f:
        data = json.load(f)
    rows = data["results"]
    names = [r["name"] for r in rows]
    ratios = [r["ratio"] for r in rows]
    fig, ax = plt.subplots(figsize=(9, 4))
    colors = ["#d9541e" if r > 1 else "#4c9a2a" for r in ratios]
    ax.barh(range(len(rows)), ratios, color=colors)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(rows)), names, fontsize=9)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("Ember time / PyTorch time (log scale; below 1: Ember is faster)")
    for i, r in enumerate(ratios):
        ax.text(r, i, f" {r:.2f}", va="center", fontsize=8)
    gpu = data["environment"].get("gpu", "GPU")
    ax.set_title(f"CUDA backend, first stage: {gpu}, {data['environment'].get('mib')} MiB copies")
    fig.tight_layout()
    fig.savefig(options.chart, dpi=110)


if __name__ == "__main__":
    main()
