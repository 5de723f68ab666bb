"""Runs every benchmark, writes the results as JSON and a PNG chart of the ratios.

    /root/venvs/torch/bin/python benchmarks/run_all.py            # with PYTHONPATH=build/python
    python benchmarks/run_all.py --json out.json --chart out.png --quick

The chart shows ember time / reference time per case (below 1: Ember is faster); matplotlib is
needed only for the chart (benchmarks/requirements.txt).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import bench_autograd
import bench_elementwise
import bench_overhead
import ember
from common import REFERENCE, environment

HERE = Path(__file__).resolve().parent


def chart(results, path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"matplotlib is not installed: no chart written ({path})")
        return
    rows = [r for r in results if r["ratio"] is not None]
    labels = [f"{r['name']}  [{r['threads']} thr]" for r in rows]
    ratios = [r["ratio"] for r in rows]
    colors = ["#2a9d8f" if x <= 1.0 else "#e76f51" for x in ratios]
    fig, ax = plt.subplots(figsize=(9, 0.38 * len(rows) + 1.4))
    y = range(len(rows))[::-1]
    ax.barh(list(y), ratios, color=colors)
    ax.set_yticks(list(y))
    ax.set_yticklabels(labels, fontsize=8)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.axvline(0.5, color="gray", linewidth=0.8, linestyle="--")
    for yi, x in zip(y, ratios):
        ax.text(x, yi, f" {x:.2f}", va="center", fontsize=7)
    ax.set_xlabel(f"time ratio ember / {REFERENCE} (lower is better; dashed: overhead goal 0.5)")
    ax.set_title("Ember vs " + REFERENCE + " (median of alternating runs)", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    print(f"chart: {path}")


def markdown_table(results) -> str:
    """The results as a Markdown table, for docs/performance.md."""
    from common import format_time

    lines = [
        f"| case | threads | ember | {REFERENCE} | ratio | notes |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in results:
        if r["ratio"] is None:
            lines.append(f"| {r['name']} | {r['threads']} | | | | {r['note']} |")
            continue
        notes = ", ".join(f"{k} {v:.1f}" for k, v in r["extra"].items())
        lines.append(
            f"| {r['name']} | {r['threads']} | {format_time(r['ember_s']).strip()} "
            f"| {format_time(r['ref_s']).strip()} | {r['ratio']:.2f} | {notes} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", type=Path, default=HERE / "results" / "results.json")
    p.add_argument("--chart", type=Path, default=HERE.parent / "docs" / "images" / "benchmarks.png")
    p.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
    args = p.parse_args(argv)

    repeat = 3 if args.quick else None
    start = time.time()
    results = []
    results += bench_overhead.run(threads=(1,), **({"repeat": repeat} if repeat else {}))
    results += bench_elementwise.run(threads=(1, 2), **({"repeat": repeat} if repeat else {}))
    results += bench_autograd.run(threads=(1,), **({"repeat": repeat} if repeat else {}))
    ember.set_num_threads(1)
    rows = [r.as_dict() for r in results]
    out = {"environment": environment(), "seconds": round(time.time() - start, 1), "results": rows}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=2) + "\n")
    print(f"results: {args.json}")
    chart(rows, args.chart)
    print()
    print(markdown_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
