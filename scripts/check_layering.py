#!/usr/bin/env python3
"""Fails when a C++ file includes a header from a layer above its own.

The layers of csrc/, lowest first (docs/design/architecture.md explains each):

    tables < core < dispatch < kernels < ops = data = distributed < autograd = api < bindings

``data/`` (tar shards and field decoders for ember.data) needs only ``core/``'s errors; it sits
beside ``ops/`` so nothing below it can reach it. ``distributed/`` (stores and the Gloo process
group) needs ``core/``'s tensors and errors and sits there too.
``tables/`` holds the op tables (X-macro rows, ``*.def``): plain data that includes nothing
and that every layer may read. A file may include headers of its own layer and of the layers
below. ``autograd/`` (the engine) and ``api/`` (the public ops that record) are one layer: the
engine accumulates gradients with public ops, and the public ops build the engine's nodes.

Usage: ``python scripts/check_layering.py [--counts]``. ``--counts`` prints how many includes
go from each layer to each other one (the numbers the architecture note quotes).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CSRC = ROOT / "csrc"
RANK = {
    "tables": -1,
    "core": 0,
    "dispatch": 1,
    "kernels": 2,
    "ops": 3,
    "data": 3,
    "distributed": 3,
    "autograd": 4,
    "api": 4,
    "bindings": 5,
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(relative: str) -> str | None:
    top = relative.split("/", 1)[0]
    return top if top in RANK else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--counts", action="store_true", help="print include counts per layer pair")
    args = parser.parse_args()
    counts: Counter[tuple[str, str]] = Counter()
    violations = []
    for path in sorted(CSRC.rglob("*")):
        if path.suffix not in {".h", ".cpp", ".cu", ".cuh", ".def"}:
            continue
        source = path.relative_to(CSRC).as_posix()
        own = layer_of(source)
        if own is None:
            continue
        for included in INCLUDE.findall(path.read_text()):
            target = layer_of(included)
            if target is None:
                continue
            counts[(own, target)] += 1
            if RANK[target] > RANK[own]:
                violations.append(
                    f"csrc/{source}: includes {included} ({own} may not include {target})"
                )
    if args.counts:
        for (src, dst), n in sorted(counts.items(), key=lambda kv: (RANK[kv[0][0]], kv[0])):
            if src != dst:
                print(f"{src:>9} -> {dst:<9} {n}")
    for line in violations:
        print(line)
    if violations:
        print(f"{len(violations)} include(s) of a higher layer", file=sys.stderr)
        return 1
    print("layering: no file includes a layer above its own")
    return 0


if __name__ == "__main__":
    sys.exit(main())
