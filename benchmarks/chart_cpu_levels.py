"""Chart and Markdown table of bench_cpu_levels.py results: Ember / PyTorch time per case, one
bar per CPU level and thread count.

    python benchmarks/chart_cpu_levels.py benchmarks/results/cpu_levels_*.json \\
        --chart docs/images/cpu_levels.png --markdown
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def load(paths):
    runs = []
    for p in paths:
        with open(p) as f:
            runs.append(json.load(f))
    return runs


def table(runs) -> str:
    keys = [f"{r['level']} {r['threads']}t" for r in runs]
    names = []
    for r in runs:
        for row in r["results"]:
            if row["name"] not in names:
                names.append(row["name"])
    lines = ["| case | " + " | ".join(keys) + " |", "| --- |" + " ---: |" * len(keys)]
    for name in names:
        cells = []
        for r in runs:
            row = next((x for x in r["results"] if x["name"] == name), None)
            cells.append("-" if row is None or row["ratio"] is None else f"{row['ratio']:.2f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def chart(runs, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [row["name"] for row in runs[0]["results"] if row["ratio"] is not None]
    fig, ax = plt.subplots(figsize=(10, 0.32 * len(names) * max(1, len(runs) / 2) + 1.5))
    height = 0.8 / len(runs)
    colors = ["#264653", "#2a9d8f", "#e9c46a", "#f4a261", "#e76f51", "#8ab17d"]
    for k, r in enumerate(runs):
        ratios = []
        for name in names:
            row = next((x for x in r["results"] if x["name"] == name), None)
            ratios.append(row["ratio"] if row and row["ratio"] is not None else 0)
        ys = [len(names) - 1 - i + (k - (len(runs) - 1) / 2) * height for i in range(len(names))]
        label = f"{r['level']}, {r['threads']} thread{'s' if r['threads'] > 1 else ''}"
        ax.barh(ys, ratios, height=height, color=colors[k % len(colors)], label=label)
    ax.set_yticks(range(len(names))[::-1])
    ax.set_yticklabels(names, fontsize=7)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.axvline(0.7, color="gray", linewidth=0.8, linestyle="--")
    ax.set_xlabel("time ratio ember / torch at the same CPU level (lower is better)")
    cpu = runs[0]["environment"].get("cpu", "")
    ax.set_title(f"Ember vs PyTorch per CPU level ({cpu})", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    print(f"chart: {path}")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("results", nargs="+")
    p.add_argument("--chart", default=None)
    p.add_argument("--markdown", action="store_true")
    args = p.parse_args()
    runs = load(args.results)
    if args.markdown:
        print(table(runs))
    if args.chart:
        chart(runs, Path(args.chart))


if __name__ == "__main__":
    main()
