"""Chart of bench_quantized.py results: for each dynamic Linear case, Ember int8's time over Ember
float's, PyTorch int8's and ONNX Runtime int8's (below 1: Ember int8 is faster), one panel per
results file (a thread count, a CPU level). The dashed line is the issue's 0.8 goal against
PyTorch's int8 time; 0.5 is the 2x-over-float goal on VNNI machines.

    python benchmarks/chart_quantized.py benchmarks/results/quantized.1.json \\
        benchmarks/results/quantized.2.json benchmarks/results/quantized_avx2.1.json \\
        --chart docs/images/quantized.png
"""

from __future__ import annotations

import argparse
import json
import os

SERIES = (("ember_float", "over Ember float"), ("torch_int8", "over PyTorch int8"),
          ("ort_int8", "over ONNX Runtime int8"))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("results", nargs="+")
    p.add_argument("--chart", required=True)
    args = p.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = []
    for path in args.results:
        with open(path) as f:
            runs.append((os.path.basename(path), json.load(f)))
    fig, axes = plt.subplots(len(runs), 1, figsize=(11, 3.4 * len(runs)), squeeze=False)
    width = 0.8 / len(SERIES)
    for ax, (label, run) in zip(axes[:, 0], runs):
        rows = run["results"]
        names = [r["name"].replace("dynamic Linear ", "").replace(" batch ", "\nb") for r in rows]
        for i, (key, text) in enumerate(SERIES):
            ratios = [r["ms"]["ember_int8"] / r["ms"][key] if key in r["ms"] else float("nan")
                      for r in rows]
            ax.bar([x + (i - 1) * width for x in range(len(rows))], ratios, width, label=text)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.axhline(0.8, color="gray", linestyle="--", linewidth=0.8)
        ax.axhline(0.5, color="gray", linestyle=":", linewidth=0.8)
        level = run["environment"].get("ember_cpu_capability", "?")
        ax.set_title(f"{label}: {run['threads']} thread(s), Ember level {level}, "
                     f"{run['environment'].get('cpu', '')}")
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels(names, fontsize=8)
        ax.set_ylabel("Ember int8 time ratio")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.chart, dpi=90)
    print(f"wrote {args.chart}")


if __name__ == "__main__":
    main()
