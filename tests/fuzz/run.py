"""Command line: ``python -m tests.fuzz [--calls N | --seconds S] [--seed S] ...`` (README.md)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pickle
import re
import subprocess
import sys
import time

if __package__ in (None, ""):  # run as a script: python tests/fuzz/run.py
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    __package__ = "tests.fuzz"

from tests.fuzz import catalog, report, runner, shrink  # noqa: E402
from tests.fuzz.generate import Generator  # noqa: E402

DEFAULT_CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    p.add_argument("--calls", type=int, default=None, help="number of calls (default 10000)")
    p.add_argument("--seconds", type=float, default=None, help="time budget; stops after it")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--start", type=int, default=0, help="index of the first call")
    p.add_argument("--threads", type=int, default=1, choices=(1, 2))
    p.add_argument("--batch", type=int, default=1000, help="calls per child process")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds without progress = hang")
    p.add_argument(
        "--mem-gb",
        type=float,
        default=2.0,
        help="address space a child may allocate beyond what it has at start",
    )
    p.add_argument("--corpus", default=DEFAULT_CORPUS, help="where reproducers go ('' for none)")
    p.add_argument("--no-torch", action="store_true", help="crashes and hangs only, no oracle")
    p.add_argument("--report", default="", help="write the JSON report here")
    p.add_argument("--replay", default="", help="re-run the reproducers in a file or directory")
    p.add_argument("--shrink", default="", help="shrink the arguments of corpus reproducers")
    p.add_argument("--print-call", action="store_true", help="print the reproducer of each call")
    p.add_argument("--dump-signatures", action="store_true",
                   help="record torch's parameter lists in signatures.json")  # fmt: skip
    p.add_argument("--start-method", default="forkserver", choices=("forkserver", "spawn"))
    a = p.parse_args(argv)
    if a.calls is None and a.seconds is None:
        a.calls = 10000
    return a


def torch_version(args):
    if args.no_torch or importlib.util.find_spec("torch") is None:
        return None
    out = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                         capture_output=True, text=True)  # fmt: skip
    return out.stdout.strip() or None


def load_catalog(child: runner.ChildRunner) -> dict:
    """Runs catalog.catalog_main in children until it finishes (skipping OpInfos that crash)."""
    cat = {"api": [], "seeds": [], "missing": [], "signatures": catalog.load_signatures()}
    skip: set = set()
    for _attempt in range(20):
        recv_end, send_end = child.ctx.Pipe(duplex=False)
        errlog = os.path.join(child.tmpdir, "catalog.log")
        proc = child.ctx.Process(target=catalog.catalog_main,
                                 args=(send_end, child.opts, errlog, sorted(skip)))  # fmt: skip
        proc.start()
        send_end.close()
        current, ended = None, False
        while True:
            if not recv_end.poll(300):
                proc.kill()
                break
            try:
                data = recv_end.recv_bytes()
            except (EOFError, OSError):
                break
            if data[:1] == b"P":
                current = data[1:].decode()
                continue
            msg = pickle.loads(data)
            if msg[0] == "API":
                cat["api"] = msg[1]
            elif msg[0] == "MISSING":
                cat["missing"] = msg[1]
            elif msg[0] == "SEEDS":
                cat["seeds"].extend(msg[1])
                skip.add(current)  # done: a restart need not redo it
            elif msg[0] == "END":
                ended = True
                break
        recv_end.close()
        proc.join(5)
        if ended:
            return cat
        if not cat["api"]:
            with open(errlog, errors="replace") as f:
                sys.exit(
                    f"fuzz: the catalog child failed before listing the API:\n{f.read()[-3000:]}"
                )
        print(f"fuzz: op database sample {current!r} killed the catalog child "
              f"(exit {proc.exitcode}); skipping it", file=sys.stderr)  # fmt: skip
        skip.add(current)
    return cat


def fuzz(args) -> int:
    tv = torch_version(args)
    opts = {"torch": bool(tv), "threads": args.threads, "seed": args.seed, "mem_gb": args.mem_gb}
    child = runner.ChildRunner(opts, args.timeout, args.start_method)
    t0 = time.time()
    cat = load_catalog(child)
    child.opts["torch_missing"] = cat["missing"]
    gen = Generator(cat)
    print(f"fuzz: {len(gen.paths)} functions and methods, {len(gen.modules)} modules, "
          f"{len(cat['seeds'])} op-database seeds ({time.time() - t0:.1f} s); "
          f"oracle: {'torch ' + tv if tv else 'none'}; seed {args.seed}, "
          f"{args.threads} thread(s)", flush=True)  # fmt: skip
    rep = report.Report(seed=args.seed, threads=args.threads, torch_version=tv, corpus=args.corpus)
    end = args.start + args.calls if args.calls is not None else None
    deadline = time.time() + args.seconds if args.seconds is not None else None
    i, last_print = args.start, time.time()
    try:
        while (end is None or i < end) and (deadline is None or time.time() < deadline):
            n = args.batch if end is None else min(args.batch, end - i)
            index = list(range(i, i + n))
            calls = [gen.call(args.seed, j) for j in index]
            if args.print_call:
                for j, c in zip(index, calls):
                    print(f"# call {j}\n{rep.source(c, j)}")
            run_batch(child, rep, calls, index)
            i += n
            if time.time() - last_print > 30:
                last_print = time.time()
                print(f"fuzz: {rep.summary_line()[6:]} ({i - args.start} generated)", flush=True)
    except KeyboardInterrupt:
        print("fuzz: interrupted", file=sys.stderr)
    print(rep.summary(), flush=True)
    if args.report:
        with open(args.report, "w") as f:
            json.dump(rep.to_json(), f, indent=1, default=str)
    c = rep.counts()
    return 1 if c["crashes"] or c["hangs"] else 0


def run_batch(child, rep, calls, index):
    """Runs one batch, restarting after each crash or hang (minimised and recorded)."""
    while calls:
        res = child.run(calls, index)
        if res.startup_error:
            sys.exit(f"fuzz: a child failed to start:\n{res.startup_error}")
        rep.add_batch(calls, index, res)
        if res.event is None:
            return
        k = res.event.index
        t0 = time.time()
        if res.event.kind.endswith("hang"):
            rep.finding_seconds += child.hang_timeout  # the wait that detected it
        if res.event.kind.startswith("torch"):  # not ember's bug: record, do not minimise,
            seq, sidx, ev, note = [calls[k]], [index[k]], res.event, "torch side, not minimised"
            # and stop asking torch about this op (one timeout per op is enough)
            child.opts["torch_missing"] = list(child.opts["torch_missing"]) + [calls[k]["fn"]]
        else:
            seq, sidx, ev, note = runner.minimise(child, calls, index, res.event)
            if len(seq) == 1 and rep.files_per_key[(ev.kind, seq[0]["fn"])] < SHRINK_PER_OP:
                seq, ev, note = shrink_call(child, seq[0], sidx[0], ev, note)
        rep.finding_seconds += time.time() - t0
        try:
            entry = rep.add_event(seq, sidx, ev, note)
        except Exception as e:  # noqa: BLE001  (a reporting bug must not end a long run)
            print(f"fuzz: could not record the {ev.kind} at call {index[k]}: {e!r}", flush=True)
            calls, index = calls[k + 1 :], index[k + 1 :]
            continue
        print(f"fuzz: {ev.kind} ({ev.signal}) in {entry['op']} at call {index[k]}; "
              f"{note}; {entry['file'] or 'not written (corpus cap)'}", flush=True)  # fmt: skip
        calls, index = calls[k + 1 :], index[k + 1 :]


SHRINK_PER_OP = 2  # events per (kind, op) whose reproducer gets shrunk (each costs child runs)


def shrink_call(child, call, idx, event, note):
    """([simplest call], its event, note): shrink.shrink with a child run as the test."""
    last = [event]

    def reproduces(c):
        ev = child.run([c], [idx]).event
        if runner.same_event(ev, event.kind, 0):
            last[0] = ev
            return True
        return False

    budget = 6 if event.kind == "hang" else 16
    small, runs = shrink.shrink(reproduces, call, budget)
    if small is not call:
        note += "; arguments shrunk"
    return [small], last[0], note


def shrink_corpus(args) -> int:
    """Rewrites one-call corpus files with shrunk arguments (the calls must still crash/hang)."""
    path = args.shrink
    files = sorted(
        os.path.join(path, f) for f in os.listdir(path) if f.endswith(".py")
    ) if os.path.isdir(path) else [path]  # fmt: skip
    opts = {"torch": False, "threads": args.threads, "seed": 0, "mem_gb": args.mem_gb}
    child = runner.ChildRunner(opts, args.timeout, args.start_method)
    for f in files:
        with open(f) as fh:
            text = fh.read()
        head = [ln for ln in text.splitlines() if ln.startswith("# ")]
        specs = [json.loads(ln[8:]) for ln in head if ln.startswith("# spec: ")]
        m = re.match(
            r"# seed (\d+), call (\d+), threads (\d+); (.*)", head[1] if len(head) > 1 else ""
        )
        kind = head[0].split()[4] if head else ""
        if len(specs) != 1 or not m or kind not in ("crash", "hang"):
            print(f"skipped (not a one-call crash or hang): {f}")
            continue
        seed, idx, threads = int(m.group(1)), int(m.group(2)), int(m.group(3))
        child.opts.update(seed=seed, threads=threads)
        ev = child.run(specs, [idx]).event
        if not runner.same_event(ev, kind, 0):
            print(f"does not reproduce any more: {f}")
            continue
        calls, ev, note = shrink_call(child, specs[0], idx, ev, m.group(4))
        rep = report.Report(seed=seed, threads=threads, torch_version=None, corpus="")
        entry = {"kind": kind, "op": calls[0]["fn"], "signal": ev.signal, "index": idx,
                 "note": note, "specs": calls, "log": report._trim_log(ev.log),
                 "source": rep.source(calls, [idx], crash=True)}  # fmt: skip
        with open(f, "w") as fh:
            fh.write(report.corpus_text(entry, seed, threads))
        print(f"shrunk: {f}")
    return 0


def replay(args) -> int:
    """Re-runs corpus reproducers, each in its own process with the fuzzer's limits."""
    path = args.replay
    files = sorted(
        os.path.join(path, f) for f in os.listdir(path) if f.endswith(".py")
    ) if os.path.isdir(path) else [path]  # fmt: skip
    bad = 0
    limit = int(args.mem_gb * (1 << 30))
    pre = f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({limit + (4 << 30)},) * 2); "
    for f in files:
        cmd = [sys.executable, "-X", "faulthandler", "-c", pre + f"exec(open({f!r}).read())"]
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
            rc = out.returncode
            status = (
                "ok" if rc == 0 else (f"crash (signal {-rc})" if rc < 0 else f"raised (exit {rc})")
            )
            err = out.stderr.strip().splitlines() or [""]
            tail = next((ln for ln in err if ln.startswith("Fatal Python error")), err[-1])[:150]
        except subprocess.TimeoutExpired:
            status, rc, tail = "hang", None, ""
        if rc is None or rc < 0:
            bad += 1
        print(f"{status:18s} {f}" + (f"  {tail}" if rc else ""))
    print(f"replay: {len(files)} reproducers, {bad} still crash or hang")
    return 1 if bad else 0


def dump_signatures() -> int:
    script = (
        "import ember, json, torch, sys\n"
        "from tests.fuzz import catalog\n"
        "api = catalog.api_entries(ember)\n"
        "sigs = catalog.torch_signatures(torch, [e['path'] for e in api])\n"
        "rows = [json.dumps(k) + ': ' + json.dumps(v) for k, v in sorted(sigs.items())]\n"
        "open(catalog.SIGNATURES_FILE, 'w').write('{\\n' + ',\\n'.join(rows) + '\\n}\\n')\n"
        "print(len(sigs), 'signatures written to', catalog.SIGNATURES_FILE)\n"
    )
    return subprocess.call([sys.executable, "-c", script])


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.dump_signatures:
        return dump_signatures()
    if args.replay:
        return replay(args)
    if args.shrink:
        return shrink_corpus(args)
    return fuzz(args)


if __name__ == "__main__":
    sys.exit(main())
