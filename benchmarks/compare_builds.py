"""Before/after: the same benchmarks on two builds of Ember, in one run, alternating.

A refactor that should not change speed is checked by running its benchmarks against the build
before it and the build after it, interleaved so that both see the same machine state:

    python benchmarks/compare_builds.py --before /tmp/before/python --after build/python \\
        --rounds 3 bench_overhead bench_autograd

Each round runs every benchmark module once per build (before first in even rounds, after first
in odd ones), each in a fresh process (two builds of
one extension cannot share a process), with that build first on PYTHONPATH and its libember
first on LD_LIBRARY_PATH (so a copy of build/python can serve as "before"). The table gives,
per case, the median over rounds of Ember's time and of its ratio to the reference (PyTorch or
NumPy, measured in the same process as each Ember timing).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

RUNNER = """
import json, sys
sys.path.insert(0, {here!r})
import ember, importlib
results = []
for name in {modules!r}:
    results += [r.as_dict() for r in importlib.import_module(name).run()]
print("@@RESULTS@@" + json.dumps({{"ember": ember.__file__, "results": results}}))
"""


def run_once(build: str, modules: list[str]) -> list[dict]:
    # A copied build's extension finds its own libember first (its RUNPATH names the tree it
    # was built in, which may hold another build by now).
    library_path = os.pathsep.join(
        [str(Path(build) / "ember"), os.environ.get("LD_LIBRARY_PATH", "")]
    )
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([build, str(HERE)]), LD_LIBRARY_PATH=library_path
    )
    code = RUNNER.format(here=str(HERE), modules=modules)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    payload = json.loads(out.split("@@RESULTS@@", 1)[1])
    if not payload["ember"].startswith(str(Path(build).resolve())):
        raise SystemExit(f"{build}: imported ember from {payload['ember']} instead")
    return payload["results"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", required=True, help="folder holding the 'before' ember package")
    parser.add_argument("--after", required=True, help="folder holding the 'after' ember package")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write every round's results here")
    parser.add_argument("modules", nargs="+", help="benchmark modules, e.g. bench_overhead")
    args = parser.parse_args()

    runs: dict[str, list[list[dict]]] = {"before": [], "after": []}
    builds = [("before", args.before), ("after", args.after)]
    for r in range(args.rounds):
        # ABBA order: the build that runs second in a round is not always the same one.
        for label, build in builds if r % 2 == 0 else builds[::-1]:
            print(f"round {r + 1}/{args.rounds}: {label} ({build})", flush=True)
            runs[label].append(run_once(build, args.modules))

    def summary(label: str) -> dict[tuple[str, int], tuple[float, float]]:
        by_case: dict[tuple[str, int], list[dict]] = {}
        for results in runs[label]:
            for res in results:
                by_case.setdefault((res["name"], res["threads"]), []).append(res)
        return {
            case: (
                statistics.median(x["ember_s"] for x in rs),
                statistics.median(x["ratio"] for x in rs),
            )
            for case, rs in by_case.items()
            if all(x["ratio"] is not None for x in rs)
        }

    before, after = summary("before"), summary("after")
    print(f"\n{'case':<38} {'before':>10} {'after':>10}   ratio vs reference: before  after")
    for case in before:
        if case not in after:
            continue
        (tb, rb), (ta, ra) = before[case], after[case]
        name = f"{case[0]} [{case[1]} thr]"
        print(f"{name:<38} {tb * 1e6:>8.2f}us {ta * 1e6:>8.2f}us   {rb:>24.2f}  {ra:5.2f}")
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1))


if __name__ == "__main__":
    main()
