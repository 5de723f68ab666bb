"""Counting outcomes, grouping differences, writing reproducers to the corpus, the JSON report."""

from __future__ import annotations

import collections
import hashlib
import json
import os
import re
import time

from .oracle import RANDOM_OPS, short_name
from .spec import to_source
from .worker import BUILD_PREFIX, call_seed

BUILD_OP = "(building the arguments)"

PER_KEY_FILES = 5  # corpus files kept per (kind, op) in one run


class Report:
    def __init__(self, *, seed: int, threads: int, torch_version: str | None, corpus: str):
        self.seed = seed
        self.threads = threads
        self.torch_version = torch_version
        self.corpus = corpus
        self.started = time.time()
        self.calls = 0
        self.codes = collections.Counter()
        self.ops = collections.Counter()
        self.mismatch: dict = {}
        self.wrong: dict = {}
        self.internal: dict = {}
        self.events: dict = {"crash": [], "hang": [], "torch-crash": [], "torch-hang": []}
        self.files_per_key = collections.Counter()
        self.finding_seconds = 0.0  # detecting hangs, minimising and shrinking

    # -- counting ---------------------------------------------------------------------------

    def add_batch(self, calls, index, res):
        self.calls += res.done
        self.codes.update(res.codes)
        for c in calls[: res.done]:
            self.ops[c["fn"]] += 1
        for note in res.notes:
            tag, k = note[0], note[1]
            call, idx = calls[k], index[k]
            if tag == "X":
                _, _, ecls, tcls, emsg, tmsg = note
                # arguments that one library cannot even build: one group, whatever the op
                op = BUILD_OP if BUILD_PREFIX in ecls + tcls else call["fn"]
                self._group(self.mismatch, (op, ecls, tcls), call, idx,
                            ember_msg=emsg, torch_msg=tmsg)  # fmt: skip
            elif tag == "W":
                _, _, kind, detail = note
                self._group(self.wrong, (call["fn"], kind), call, idx, detail=detail)
            elif tag == "I":
                _, _, ecls, emsg = note
                self._group(self.internal, (call["fn"], ecls), call, idx, ember_msg=emsg)

    @staticmethod
    def _group(table, key, call, idx, **info):
        g = table.get(key)
        if g is None:
            table[key] = dict(count=1, call=call, index=idx, **info)
        else:
            g["count"] += 1
            # prefer the smallest example (shortest spec) as the representative
            if len(json.dumps(call)) < len(json.dumps(g["call"])):
                g.update(call=call, index=idx, **info)

    def add_event(self, calls, index, event, note):
        """A minimised crash or hang; writes its reproducer into the corpus."""
        self.calls += 1
        self.ops[calls[-1]["fn"]] += 1
        src = self.source(calls, index, crash=True)
        entry = {
            "kind": event.kind,
            "op": calls[-1]["fn"],
            "signal": event.signal,
            "index": index[-1],
            "calls": len(calls),
            "note": note,
            "source": src,
            "specs": calls,
            "log": _trim_log(event.log),
        }
        entry["file"] = self._write_corpus(entry)
        self.events[event.kind].append(entry)
        return entry

    # -- reproducers ------------------------------------------------------------------------

    def source(self, calls, index, *, crash=False, lib="ember"):
        if isinstance(calls, dict):
            calls, index = [calls], [index]
        seeds = None
        if any(short_name(c["fn"]).strip("_") in RANDOM_OPS or "ctor" in c for c in calls):
            seeds = [call_seed(self.seed, i) for i in index]
        return to_source(calls, lib=lib, threads=self.threads if crash else 0, seeds=seeds)

    def _write_corpus(self, entry) -> str:
        if not self.corpus:
            return ""
        key = (entry["kind"], entry["op"])
        if self.files_per_key[key] >= PER_KEY_FILES:
            return ""
        self.files_per_key[key] += 1
        os.makedirs(self.corpus, exist_ok=True)
        digest = hashlib.sha1(entry["source"].encode()).hexdigest()[:10]
        slug = re.sub(r"[^A-Za-z0-9_]+", "_", short_name(entry["op"])).strip("_") or "op"
        path = os.path.join(self.corpus, f"{entry['kind']}-{slug}-{digest}.py")
        with open(path, "w") as f:
            f.write(corpus_text(entry, self.seed, self.threads))
        return path

    # -- output -----------------------------------------------------------------------------

    def counts(self):
        return {
            "calls": self.calls,
            "crashes": len(self.events["crash"]),
            "hangs": len(self.events["hang"]),
            "exception_class_differences": self.codes["x"],
            "wrong_values": self.codes["w"],
        }

    def summary_line(self) -> str:
        c = self.counts()
        return (
            f"fuzz: {c['calls']} calls, {c['crashes']} crashes, {c['hangs']} hangs, "
            f"{c['exception_class_differences']} exception-class differences, "
            f"{c['wrong_values']} wrong values"
        )

    def _groups(self, table, names):
        out = []
        for key, g in sorted(table.items(), key=lambda kv: (-kv[1]["count"], kv[0])):
            row = dict(zip(names, key))
            row["count"] = g["count"]
            row.update({k: v for k, v in g.items() if k not in ("call", "count", "index")})
            row["example"] = self.source(g["call"], g["index"])
            if self.torch_version:
                row["torch_example"] = self.source(g["call"], g["index"], lib="torch")
            row["spec"] = g["call"]
            out.append(row)
        return out

    def to_json(self) -> dict:
        elapsed = time.time() - self.started
        return {
            "counts": self.counts(),
            "seconds": round(elapsed, 1),
            "calls_per_second": round(self.calls / elapsed, 1) if elapsed else 0,
            "seconds_on_findings": round(self.finding_seconds, 1),
            "calls_per_second_fuzzing": round(
                self.calls / max(elapsed - self.finding_seconds, 1e-9), 1
            ),
            "seed": self.seed,
            "threads": self.threads,
            "torch": self.torch_version,
            "outcomes": {
                "both_ok_and_equal": self.codes["o"],
                "same_exception_class": self.codes["s"],
                "exception_class_differences": self.codes["x"],
                "wrong_values": self.codes["w"],
                "no_oracle_ok": self.codes["n"],
                "no_oracle_raised": self.codes["N"],
            },
            "crashes": self.events["crash"],
            "hangs": self.events["hang"],
            "torch_crashes": self.events["torch-crash"] + self.events["torch-hang"],
            "exception_class_differences": self._groups(self.mismatch, ("op", "ember", "torch")),
            "wrong_values": self._groups(self.wrong, ("op", "kind")),
            "internal_errors": self._groups(self.internal, ("op", "ember")),
            "ops": dict(self.ops.most_common()),
        }

    def summary(self, top: int = 15) -> str:
        lines = []
        for kind in ("crash", "hang", "torch-crash", "torch-hang"):
            for e in self.events[kind]:
                where = e["file"] or "(corpus cap reached)"
                lines.append(f"{kind} ({e['signal']}) in {e['op']}: {where} [{e['note']}]")
        if self.mismatch:
            lines.append(f"exception-class differences, top {top} of {len(self.mismatch)} groups:")
            rows = sorted(self.mismatch.items(), key=lambda kv: -kv[1]["count"])[:top]
            for (op, e, t), g in rows:
                lines.append(f"  {g['count']:6d}  {op}: ember {e} vs torch {t}")
        if self.wrong:
            lines.append(f"wrong values, {len(self.wrong)} groups:")
            rows = sorted(self.wrong.items(), key=lambda kv: -kv[1]["count"])[:top]
            for (op, kind), g in rows:
                lines.append(f"  {g['count']:6d}  {op} ({kind}): {g['detail'][:100]}")
        if self.internal:
            lines.append(f"internal errors, {len(self.internal)} groups:")
            for (op, e), g in sorted(self.internal.items(), key=lambda kv: -kv[1]["count"])[:top]:
                lines.append(f"  {g['count']:6d}  {op}: {e}: {g['ember_msg'][:80]}")
        elapsed = time.time() - self.started
        fuzzing = max(elapsed - self.finding_seconds, 1e-9)
        lines.append(
            f"{self.calls / max(elapsed, 1e-9):.0f} calls/s over {elapsed:.0f} s "
            f"({self.calls / fuzzing:.0f} calls/s outside the {self.finding_seconds:.0f} s "
            "spent on detecting hangs, minimising and shrinking)"
        )
        lines.append(self.summary_line())
        return "\n".join(lines)


def corpus_text(entry: dict, seed: int, threads: int) -> str:
    """A corpus file: comment lines (kind, signal, where it came from, the JSON specs, the child's
    faulthandler output), then the reproducer."""
    head = [
        f"# ember fuzz finding: {entry['kind']} ({entry['signal']}) in {entry['op']}",
        f"# seed {seed}, call {entry['index']}, threads {threads}; {entry['note']}",
    ]
    head += ["# spec: " + json.dumps(s) for s in entry["specs"]]
    head += ["# " + line for line in entry["log"].splitlines()[:30]]
    return "\n".join(head) + "\n" + entry["source"]


def _trim_log(log: str) -> str:
    """The child's error log without the frames of the fuzzer's own machinery."""
    skip = ("multiprocessing/", "Extension modules:", 'File "<string>"')
    lines = [ln for ln in log.splitlines() if ln.strip() and not any(s in ln for s in skip)]
    return "\n".join(lines[-40:])
