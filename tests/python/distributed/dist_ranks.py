"""Runs a test body in several processes, one per rank, as a job would: each gets RANK,
WORLD_SIZE, MASTER_ADDR and MASTER_PORT (a free port) and runs ``PRELUDE + body``. Every process
is bounded by a timeout, and the result of each is returned (exit code, stdout, stderr) so that
tests can check every rank, including the ones expected to fail."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import ember

EMBER_PATH = str(Path(ember.__file__).parent.parent)

PRELUDE = """
import datetime, os, sys, time
import numpy as np
import ember
import ember.distributed as dist
RANK = int(os.environ["RANK"])
WORLD = int(os.environ["WORLD_SIZE"])
TIMEOUT = datetime.timedelta(seconds=float(os.environ.get("TEST_PG_TIMEOUT", "30")))
def init():
    dist.init_process_group("gloo", timeout=TIMEOUT)
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class RankResult:
    rank: int
    returncode: int
    stdout: str
    stderr: str


def run_ranks(tmp_path, body, world=2, timeout=60, env=None, ranks=None, port=None,
              pg_timeout=30) -> list[RankResult]:
    """Runs ``body`` in ``world`` processes (or only those in ``ranks``) and waits for all."""
    script = tmp_path / f"job_{free_port()}.py"
    script.write_text(PRELUDE + textwrap.dedent(body))
    port = port or free_port()
    procs = []
    for rank in (range(world) if ranks is None else ranks):
        rank_env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("TORCHELASTIC_", "PET_"))}
        rank_env.update(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank),
                        MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1",
                        TEST_PG_TIMEOUT=str(pg_timeout))
        rank_env["PYTHONPATH"] = os.pathsep.join(filter(None, [EMBER_PATH,
                                                               rank_env.get("PYTHONPATH")]))
        rank_env.update(env or {})
        procs.append((rank, subprocess.Popen([sys.executable, str(script)], env=rank_env,
                                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                             text=True)))
    results = []
    try:
        for rank, proc in procs:
            out, err = proc.communicate(timeout=timeout)
            results.append(RankResult(rank, proc.returncode, out, err))
    finally:
        for _, proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    return results


def assert_all_ok(results):
    for r in results:
        assert r.returncode == 0, f"rank {r.rank} failed:\n{r.stdout}\n{r.stderr}"
