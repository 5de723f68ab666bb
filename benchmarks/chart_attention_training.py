"""Chart of the attention benchmarks on one CPU: bench_sdpa.py (per case, Ember's time over
PyTorch's) and bench_lm_training.py (the training step and its phases), each at the CPU's own
level and at the forced avx2 level, one panel per benchmark and thread count. The dashed line is
issue 14's goal, 0.8.

    python benchmarks/chart_attention_training.py \\
        --sdpa benchmarks/results/sdpa_xeon --sdpa-avx2 benchmarks/results/sdpa_xeon_avx2 \\
        --lm benchmarks/results/lm_training_xeon.json \\
        --lm-avx2 benchmarks/results/lm_training_xeon_avx2.json \\
        --chart docs/images/attention_training_xeon.png

--sdpa / --sdpa-avx2 are bench_sdpa.py's --json prefixes (".<threads>.json" is appended).
"""

from __future__ import annotations

import argparse
import json
import os

GOAL = 0.8


def sdpa_ratios(prefix: str, threads: int) -> dict[str, float]:
    path = f"{prefix}.{threads}.json"
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        rows = json.load(f)["results"]
    return {r["name"].replace("sdpa ", ""): r["ember_s"] / r["ref_s"] for r in rows}


def lm_ratios(path: str, threads: int) -> dict[str, float]:
    if not path or not os.path.exists(path):
        return {}
    with open(path) as f:
        runs = json.load(f)["runs"]
    for run in runs:
        if run["threads"] == threads:
            return {r["name"].replace("LM training ", ""): r["ember_s"] / r["ref_s"]
                    for r in run["results"]}
    return {}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--sdpa", required=True)
    p.add_argument("--sdpa-avx2", default=None)
    p.add_argument("--lm", required=True)
    p.add_argument("--lm-avx2", default=None)
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--chart", required=True)
    args = p.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = []
    for t in args.threads:
        panels.append((f"scaled_dot_product_attention, 12 heads x 64, {t} thread(s)",
                       sdpa_ratios(args.sdpa, t),
                       sdpa_ratios(args.sdpa_avx2, t) if args.sdpa_avx2 else {}))
        panels.append((f"decoder-only LM training step, {t} thread(s)", lm_ratios(args.lm, t),
                       lm_ratios(args.lm_avx2, t)))
    fig, axes = plt.subplots(len(panels), 1, figsize=(11, 3.3 * len(panels)), squeeze=False)
    for ax, (title, best, avx2) in zip(axes[:, 0], panels):
        names = list(best)
        series = [("CPU's own level", best)] + ([("forced avx2", avx2)] if avx2 else [])
        width = 0.8 / len(series)
        for i, (label, ratios) in enumerate(series):
            offset = (i - (len(series) - 1) / 2) * width
            ax.bar([x + offset for x in range(len(names))],
                   [ratios.get(n, float("nan")) for n in names], width, label=label)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.axhline(GOAL, color="gray", linestyle="--", linewidth=0.8)
        ax.set_xticks(range(len(names)), names, rotation=20, ha="right", fontsize=8)
        ax.set_ylabel("Ember time / PyTorch")
        ax.set_ylim(0, 1.4)
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=8, loc="upper left", ncol=2)
    fig.tight_layout()
    fig.savefig(args.chart, dpi=110)
    print(f"chart: {args.chart}")


if __name__ == "__main__":
    main()
