"""Chart of the static CNN, single-layer and EmbeddingBag int8 results: Ember int8's speed-up
over Ember float (above 1: int8 faster) for bench_quantized_cnn.py (network and --shapes) and
bench_quantized_embedding.py, at the VNNI level and forced avx2, 2 threads.

    python benchmarks/chart_quantized_cnn.py --results benchmarks/results --chart
        docs/images/quantized_cnn.png
"""

from __future__ import annotations

import argparse
import json
import os


def series(results_dir, stem, key_fast, key_slow):
    out = {}
    for level, suffix in (("VNNI", ""), ("avx2", "_avx2")):
        path = os.path.join(results_dir, f"{stem}{suffix}.2.json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            rows = json.load(f)["results"]
        out[level] = [(r["name"], r["ms"][key_slow] / r["ms"][key_fast]) for r in rows]
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--results", default="benchmarks/results")
    p.add_argument("--chart", required=True)
    args = p.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    residual = series(args.results, "quantized_cnn", "ember_int8", "ember_float")
    mobile = series(args.results, "quantized_mobile", "ember_int8", "ember_float")
    networks = {level: residual[level] + mobile.get(level, []) for level in residual}
    panels = [("static CNN (residual, MobileNet-shaped)", networks),
              ("single conv layers", series(args.results, "quantized_conv_shapes", "auto",
                                            "float_conv")),
              ("EmbeddingBag", series(args.results, "quantized_embedding", "ember_q",
                                      "ember_float"))]
    fig, axes = plt.subplots(len(panels), 1, figsize=(13, 11))
    for ax, (title, data) in zip(axes, panels):
        levels = list(data)
        width = 0.8 / max(1, len(levels))
        for i, level in enumerate(levels):
            names = [n.replace("static CNN ", "residual ").replace("mobile CNN ", "mobile ")
                     .replace("EmbeddingBag ", "")
                     .replace(", 512 bags of 40", "") for n, _ in data[level]]
            values = [v for _, v in data[level]]
            ax.bar([x + (i - (len(levels) - 1) / 2) * width for x in range(len(values))], values,
                   width, label=level)
            ax.set_xticks(range(len(names)))
            ax.set_xticklabels(names, fontsize=7, rotation=12)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.axhline(2.0, color="gray", linestyle=":", linewidth=0.8)
        ax.set_ylabel("speed-up over float")
        ax.set_title(f"{title}: Ember int8 vs Ember float, 2 threads, AMD EPYC Zen 4")
        ax.legend()
    fig.tight_layout()
    fig.savefig(args.chart, dpi=100)


if __name__ == "__main__":
    main()
