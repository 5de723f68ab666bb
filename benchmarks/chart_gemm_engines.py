"""Chart of bench_gemm_engines.py results: per shape, Ember's time with its default engine
choice over the same product with the packed kernel off, and over PyTorch's; one panel per
thread count. Below 1 is faster.

    python benchmarks/chart_gemm_engines.py benchmarks/results/gemm_engines_xeon.json \\
        --chart docs/images/gemm_engines_xeon.png
"""

from __future__ import annotations

import argparse
import json

SERIES = (("auto_over_off", "Ember / Ember with the packed kernel off"),
          ("auto_over_torch", "Ember / PyTorch"))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("results")
    p.add_argument("--chart", required=True)
    args = p.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(args.results) as f:
        data = json.load(f)
    threads = sorted({r["threads"] for r in data["rows"]})
    fig, axes = plt.subplots(len(threads), 1, figsize=(12, 4.6 * len(threads)), squeeze=False)
    width = 0.8 / len(SERIES)
    for ax, t in zip(axes[:, 0], threads):
        rows = [r for r in data["rows"] if r["threads"] == t]
        for i, (key, label) in enumerate(SERIES):
            ax.bar([x + (i - 0.5) * width for x in range(len(rows))], [r[key] for r in rows],
                   width, label=label)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels([f"{r['what']}\n{r['layout']} {r['m']}x{r['k']}x{r['n']}" for r in rows],
                           fontsize=7, rotation=25, ha="right")
        ax.set_ylim(0.6, 1.3)
        ax.set_ylabel("time ratio")
        ax.set_title(f"{data['cpu']}, {t} thread{'s' if t > 1 else ''}", fontsize=9)
        ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(args.chart, dpi=110)
    print(f"chart: {args.chart}")


if __name__ == "__main__":
    main()
