"""The child side: runs a batch of call specs against ember (and torch, when asked), reporting
progress to the parent before every library call so that a crash or a hang is pinned on one call.

Messages to the parent (raw bytes, cheap): ``E<i>`` ember is about to run call i, ``T<i>`` torch is,
``D<i>:<code>`` call i is done. Pickled tuples carry the details of notable outcomes and the
batch's end. Codes: ``o`` both succeeded and agree, ``s`` both raised the same class, ``n`` no
oracle (ember succeeded), ``N`` no oracle (ember raised), ``x`` exception-class difference,
``w`` wrong result.
"""

from __future__ import annotations

import faulthandler
import json
import os
import resource
import signal
import sys
import warnings

from . import oracle
from .spec import build_call, mutates_args

# Names that are internal-error symptoms whatever torch does.
INTERNAL = {"SystemError", "RecursionError", "AssertionError", "UnboundLocalError", "NameError"}
INTERNAL_PREFIX = "unreadable result"
BUILD_PREFIX = "building arguments: "  # an exception while making the argument values


def _vm_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def setup_child(errlog: str, opts: dict):
    """Process setup in a fresh child: output redirection, faulthandler, memory limit, threads."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    err = os.open(errlog, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(err, 2)
    sys.stdout = open(1, "w", closefd=False)
    sys.stderr = open(2, "w", closefd=False, buffering=1)
    faulthandler.enable(file=sys.stderr, all_threads=False)
    faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)
    warnings.simplefilter("ignore")
    mem = int(opts.get("mem_gb", 6) * (1 << 30))
    if mem > 0:
        limit = _vm_bytes() + mem
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    import ember

    libs = [ember]
    if opts.get("torch"):
        import torch

        libs.append(torch)
    for lib in libs:
        if opts.get("threads"):
            lib.set_num_threads(int(opts["threads"]))
    return libs


def call_seed(seed: int, index: int) -> int:
    return (seed * 1_000_003 + index * 7919) % (2**31 - 1)


class Runner:
    def __init__(self, libs, send):
        self.ember = libs[0]
        self.torch = libs[1] if len(libs) > 1 else None
        self.canon_e = oracle.Canon(self.ember)
        self.canon_t = oracle.Canon(self.torch) if self.torch else None
        self.send = send
        # torch.manual_seed also seeds CUDA lazily, recording a stack trace each time: too slow
        self.seeders = {"ember": self.ember.manual_seed}
        if self.torch is not None:
            self.seeders["torch"] = self.torch._C.default_generator.manual_seed

    def _run(self, lib, canon, call, seed):
        """(exception name or None, message, canonical result, canonical mutated args). A result
        that cannot be read back is the exception name "unreadable result: <class>"."""
        try:
            self.seeders[lib.__name__](seed)
            thunk, args, kwargs = build_call(call, lib)
        except Exception as e:  # noqa: BLE001  (the arguments themselves could not be made)
            return f"{BUILD_PREFIX}{oracle.exc_name(e)}", _message(e), None, None
        try:
            res = thunk()
        except BaseException as e:  # noqa: BLE001  (the fuzzer reports every exception)
            if isinstance(e, KeyboardInterrupt):
                raise
            return oracle.exc_name(e), _message(e), None, None
        if res is NotImplemented:
            # torch's operator methods answer bad operands with NotImplemented, which an
            # operator expression turns into TypeError: the same refusal as ember's TypeError.
            return "TypeError", "returned NotImplemented", None, None
        try:
            c = canon(res)
            after = canon([args, kwargs.get("out")]) if mutates_args(call) else None
        except Exception as e:  # noqa: BLE001
            return f"unreadable result: {oracle.exc_name(e)}", _message(e), None, None
        return None, "", c, after

    def run(self, i: int, call: dict, seed: int, torch_has: bool) -> str:
        """Runs call i; returns its outcome code (and sends details of notable outcomes)."""
        send = self.send
        send(b"E%d" % i)
        ee, emsg, eres, eafter = self._run(self.ember, self.canon_e, call, seed)
        if self.torch is None or not torch_has:
            if ee in INTERNAL or (ee or "").startswith(INTERNAL_PREFIX):
                send(("I", i, ee, emsg))
            return "n" if ee is None else "N"
        send(b"T%d" % i)
        te, tmsg, tres, tafter = self._run(self.torch, self.canon_t, call, seed)
        if te and te.startswith("unreadable"):  # torch's result is beyond the oracle
            return "n" if ee is None else "N"
        if (ee in INTERNAL or (ee or "").startswith(INTERNAL_PREFIX)) and ee != te:
            send(("I", i, ee, emsg))
        if ee != te:
            send(("X", i, ee or "no error", te or "no error", emsg, tmsg))
            return "x"
        if ee is not None:
            return "s"
        loose, structure, ties = oracle.options_for(call["fn"])
        structure = structure or "ctor" in call  # modules: random parameters
        try:
            bad = oracle.compare(eres, tres, loose=loose, structure_only=structure)
            if bad and not structure:  # within what the least precise input allows?
                floor = oracle.input_floor(call)
                bad = oracle.compare(eres, tres, loose=loose, floor=floor)
            if eafter is not None and tafter is not None:
                bad += oracle.compare(
                    eafter, tafter, loose=loose, structure_only=structure, where="args after",
                    floor=oracle.input_floor(call),
                )  # fmt: skip
        except Exception as e:  # noqa: BLE001
            bad = [("oracle", f"comparison failed: {type(e).__name__}: {e}")]
        if ties:
            bad = oracle.filter_ties(bad)
        if bad:
            kind = bad[0][0]
            if kind == "value" and "vs torch np.int" in bad[0][1] and _int_indefinite(bad[0][1]):
                kind = "value: float-to-int cast of NaN/inf/out-of-range"
            text = json.dumps(call)
            out = json.dumps(call["kwargs"].get("out"))
            if '"ref"' in text:
                kind += " (arguments alias each other)"
            elif '"l": "X"' in out:
                kind += " (out= overlaps itself)"
            elif any(f'"{x}"' in text for x in ("nan", "inf", "-inf")):
                kind += " (inputs hold NaN/inf)"
            send(("W", i, kind, bad[0][1]))
            return "w"
        return "o"


def _message(e: BaseException) -> str:
    try:
        return str(e)[:300]
    except BaseException:  # noqa: BLE001
        return "<str() raised>"


def _int_indefinite(detail: str) -> bool:
    """Whether torch's value is what x86 gives for an unrepresentable float-to-int conversion."""
    return any(f"torch np.int{b}({v})" in detail for b, v in
               ((32, -(2**31)), (64, -(2**63))))  # fmt: skip


def run_batch(conn, calls, opts, errlog):
    """Entry point of a batch child: runs calls[k] for k in order, reporting over conn."""
    libs = setup_child(errlog, opts)
    send_bytes = conn.send_bytes

    def send(msg):
        if isinstance(msg, bytes):
            send_bytes(msg)
        else:
            conn.send(msg)

    runner = Runner(libs, send)
    seed = int(opts.get("seed", 0))
    base = int(opts.get("base", 0))
    index = opts.get("index") or list(range(base, base + len(calls)))
    missing = set(opts.get("torch_missing", ()))
    send(b"S")
    for k, call in enumerate(calls):
        code = runner.run(k, call, call_seed(seed, index[k]), call["fn"] not in missing)
        send_bytes(b"D%d:%s" % (k, code.encode()))
    send(("END",))
    conn.close()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
