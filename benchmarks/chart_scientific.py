"""Chart of the issue-17 benchmarks: Ember's time over the reference's for every row of the
given result files (bench_vmap.py, bench_func.py, bench_fft.py, bench_distributions.py).

    python benchmarks/chart_scientific.py \\
        benchmarks/results/{vmap,func,fft,distributions}{,_avx2}.json \\
        --chart docs/images/scientific.png
"""

from __future__ import annotations

import argparse
import json
import os


def rows_of(path):
    with open(path) as f:
        data = json.load(f)
    label = os.path.splitext(os.path.basename(path))[0]
    out = []
    for r in data["results"]:
        if r.get("ratio") is None:
            continue
        ref = r.get("reference", "torch")
        out.append((f"{label}: {r['name']} [{r.get('threads', 1)} thr] vs {ref}", r["ratio"]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("results", nargs="+")
    parser.add_argument("--chart", required=True)
    options = parser.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [row for path in options.results if os.path.exists(path) for row in rows_of(path)]
    fig, ax = plt.subplots(figsize=(11, 0.32 * len(rows) + 1.2))
    names = [n for n, _ in rows]
    ratios = [r for _, r in rows]
    colors = ["#d9541e" if r <= 1.0 else "#999999" for r in ratios]
    ax.barh(range(len(rows)), ratios, color=colors)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("Ember's time / reference's time (below 1: Ember is faster)")
    ax.set_title("Issue 17: vmap, func, fft, distributions (same process, same machine)")
    fig.tight_layout()
    fig.savefig(options.chart, dpi=110)
    print(f"wrote {options.chart}")


if __name__ == "__main__":
    main()
