"""Chart of bench_transformer_encoder.py results: Ember's time over each other contestant's
(PyTorch with its fastpath, PyTorch without, ONNX Runtime) per case, one panel per thread count.
The dashed lines are the issue's goals: 0.9 for dense inputs against PyTorch's fastpath, 0.75 for
padded ones.

    python benchmarks/chart_transformer_encoder.py benchmarks/results/transformer_encoder.json \\
        --chart docs/images/transformer_encoder.png
"""

from __future__ import annotations

import argparse
import json

REFERENCES = (("torch", "PyTorch fastpath"), ("torch_nofast", "PyTorch, fastpath off"),
              ("ort", "ONNX Runtime"))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("results")
    p.add_argument("--chart", required=True)
    args = p.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(args.results) as f:
        runs = json.load(f)["runs"]
    fig, axes = plt.subplots(len(runs), 1, figsize=(11, 3.6 * len(runs)), squeeze=False)
    width = 0.8 / len(REFERENCES)
    for ax, run in zip(axes[:, 0], runs):
        rows = run["results"]
        names = [r["name"] for r in rows]
        for i, (key, label) in enumerate(REFERENCES):
            ratios = [r["extra"]["ratios"].get(f"ember/{key}", float("nan")) for r in rows]
            ax.bar([x + (i - 1) * width for x in range(len(rows))], ratios, width, label=label)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.axhline(0.9, color="gray", linestyle="--", linewidth=0.8)
        ax.axhline(0.75, color="gray", linestyle=":", linewidth=0.8)
        ax.set_xticks(range(len(rows)), names, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("Ember time / reference")
        env = run.get("environment", {})
        ax.set_title(f"BERT-base encoder, {run['threads']} thread(s), "
                     f"{env.get('cpu', '')} {env.get('cpu_family_model', '')} "
                     f"({env.get('ember_cpu_capability', '')})", fontsize=9)
        ax.set_ylim(0, 1.2)
        ax.legend(fontsize=8, loc="upper right", ncol=3)
    fig.tight_layout()
    fig.savefig(args.chart, dpi=110)
    print(f"chart: {args.chart}")


if __name__ == "__main__":
    main()
