"""The parent side: runs batches in child processes, watches their progress, catches crashes and
hangs, and minimises the culprit to the fewest calls that still reproduce it."""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import pickle
import signal
import tempfile
import time

from . import worker

STARTUP_TIMEOUT = 120.0  # first message of a child (imports, fork)


@dataclasses.dataclass
class Event:
    """A crash or hang: kind ("crash" | "hang" | "torch-crash" | "torch-hang"), the batch-local
    index of the call that was running, and what the child left in its error log."""

    kind: str
    index: int
    signal: str = ""
    log: str = ""


@dataclasses.dataclass
class BatchResult:
    done: int = 0  # calls completed
    codes: list = dataclasses.field(default_factory=list)  # outcome code per completed call
    notes: list = dataclasses.field(default_factory=list)  # pickled detail tuples
    event: Event | None = None
    startup_error: str = ""


def _signame(code: int) -> str:
    if code is None:
        return "?"
    if code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit {code}"


def _tail(path: str, n: int = 4000) -> str:
    try:
        with open(path, errors="replace") as f:
            return f.read()[-n:]
    except OSError:
        return ""


class ChildRunner:
    """Starts batch children from a fork server that has ember (and torch) imported already."""

    def __init__(self, opts: dict, hang_timeout: float, start_method: str = "forkserver"):
        self.opts = opts
        self.hang_timeout = hang_timeout
        self.ctx = multiprocessing.get_context(start_method)
        if start_method == "forkserver":
            preload = ["tests.fuzz.worker", "ember", "numpy"]
            if opts.get("torch"):
                preload.append("torch")
            self.ctx.set_forkserver_preload(preload)
        self.tmpdir = tempfile.mkdtemp(prefix="ember-fuzz-")
        self.children = 0

    def run(self, calls, index) -> BatchResult:
        """Runs calls (global indices `index`) in one fresh child."""
        opts = dict(self.opts, index=list(index))
        errlog = os.path.join(self.tmpdir, f"child{self.children % 4}.log")
        self.children += 1
        recv_end, send_end = self.ctx.Pipe(duplex=False)
        proc = self.ctx.Process(target=worker.run_batch, args=(send_end, calls, opts, errlog))
        proc.daemon = True
        proc.start()
        send_end.close()
        res = BatchResult()
        phase, cur = "", -1
        started = ended = False
        try:
            while True:
                timeout = self.hang_timeout if started else STARTUP_TIMEOUT
                if not recv_end.poll(timeout):
                    kind = "torch-hang" if phase == "T" else "hang"
                    if not started:
                        res.startup_error = "child did not start in time\n" + _tail(errlog)
                        break
                    _dump_and_kill(proc)
                    res.event = Event(kind, cur, "timeout", _tail(errlog))
                    break
                try:
                    data = recv_end.recv_bytes()
                except (EOFError, OSError):
                    break
                c = data[:1]
                if c == b"E" or c == b"T":
                    phase, cur = c.decode(), int(data[1:])
                elif c == b"D":
                    k, code = data[1:].split(b":")
                    res.codes.append(code.decode())
                    res.done = int(k) + 1
                    phase = ""
                elif c == b"S":
                    started = True
                else:
                    msg = pickle.loads(data)
                    if msg[0] == "END":
                        ended = True
                        break
                    res.notes.append(msg)
        finally:
            recv_end.close()
        proc.join(5)
        if proc.is_alive():
            proc.kill()
            proc.join()
        if res.event is None and not ended and not res.startup_error:
            if not started:
                res.startup_error = f"child died before starting ({_signame(proc.exitcode)})\n"
                res.startup_error += _tail(errlog)
            else:
                kind = "torch-crash" if phase == "T" else "crash"
                at = min(max(cur, res.done), len(calls) - 1)
                res.event = Event(kind, at, _signame(proc.exitcode), _tail(errlog))
        return res


def _dump_and_kill(proc):
    """Asks a hung child for its Python stacks (faulthandler on SIGUSR1), then kills it."""
    try:
        os.kill(proc.pid, signal.SIGUSR1)
        time.sleep(0.5)
    except OSError:
        pass
    proc.kill()
    proc.join()


def same_event(ev: Event | None, kind: str, last: int) -> bool:
    return ev is not None and ev.kind == kind and ev.index == last


def minimise(runner: ChildRunner, calls, index, event: Event, budget: int = 24):
    """The fewest calls (ending with the culprit) that reproduce event, as (calls, index, event,
    note). Tries the culprit alone, then bisects the start of the batch prefix, then drops
    single calls from a short prefix."""
    k = event.index
    culprit, cidx = calls[k], index[k]
    res = runner.run([culprit], [cidx])
    if same_event(res.event, event.kind, 0):
        return [culprit], [cidx], res.event, "reproduces alone"
    runs = 1
    seq, sidx = list(calls[: k + 1]), list(index[: k + 1])
    res = runner.run(seq, sidx)
    runs += 1
    if not same_event(res.event, event.kind, k):
        return [culprit], [cidx], event, "did not reproduce on replay (flaky or order-dependent)"
    best = res.event
    lo, hi = 0, k  # seq[lo:] reproduces, seq[hi:] (the culprit alone) does not
    while hi - lo > 1 and runs < budget:
        mid = (lo + hi) // 2
        res = runner.run(seq[mid:], sidx[mid:])
        runs += 1
        if same_event(res.event, event.kind, k - mid):
            lo, best = mid, res.event
        else:
            hi = mid
    seq, sidx = seq[lo:], sidx[lo:]
    j = 0
    while j < len(seq) - 1 and len(seq) <= 16 and runs < budget:
        trial, tidx = seq[:j] + seq[j + 1 :], sidx[:j] + sidx[j + 1 :]
        res = runner.run(trial, tidx)
        runs += 1
        if same_event(res.event, event.kind, len(trial) - 1):
            seq, sidx, best = trial, tidx, res.event
        else:
            j += 1
    return seq, sidx, best, f"needs {len(seq) - 1} earlier call(s)"
