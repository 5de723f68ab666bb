"""``python -m ember.distributed.run``: torchrun's launcher for the static (non-elastic) case.

It starts ``--nproc-per-node`` copies of a script on this node with the environment that
``torch.distributed.run`` gives its workers (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, ...,
TORCHELASTIC_RUN_ID), waits for them, and when one fails it stops the others and reports which
rank failed, how, and the traceback that worker printed. Options and their spellings (dashes or
underscores) are torchrun's, so existing launch commands work unchanged; what needs elastic
training (a node range, restarts, dynamic rendezvous across nodes) is refused with a message.

The module imports nothing from ember: it runs on the standard library alone, so the launcher
does not pay for the tensor library that only the workers need. See
docs/design/distributed-launcher.md.
"""

from __future__ import annotations

import argparse
import collections
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from string import Template

PROG = "python -m ember.distributed.run"
DEFAULT_MASTER_ADDR = "127.0.0.1"
DEFAULT_MASTER_PORT = 29500
# torchrun's default port for a c10d rendezvous endpoint given without one.
DEFAULT_C10D_PORT = 29400
# How long stopped workers get to exit after SIGTERM (or the forwarded signal) before SIGKILL.
TERMINATE_GRACE_S = 5.0
# How long to wait for the last output of exited workers before the report is printed.
OUTPUT_DRAIN_S = 2.0
STDERR_TAIL_LINES = 200
# Lines of stderr quoted for a failed worker that printed no Python traceback.
STDERR_QUOTE_LINES = 20
# The values of --redirects and --tee (torchrun's Std): bit 1 is stdout, bit 2 is stderr.
STD_OUT = 1
STD_ERR = 2
# torchrun names this variable for a custom prefix of tee'd lines (${role_name}, ${rank},
# ${local_rank}); without it the prefix is "[<role><local_rank>]:".
PREFIX_TEMPLATE_ENV = "TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE"
DEFAULT_PREFIX_TEMPLATE = "[${role_name}${local_rank}]:"
# Runs a script the way --run-path asks (runpy.run_path, as torchrun's run_script_path does):
# the script sees sys.argv = [script, args...].
_RUN_PATH_BOOTSTRAP = (
    "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
)
_TRACEBACK_START = "Traceback (most recent call last):"
_CHAINED_EXCEPTION_MESSAGES = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)
_HANDLED_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")


class LaunchConfigError(ValueError):
    """A command line this launcher cannot run; main() reports it as a usage error."""


# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------

def _env_default(dest, default):
    """torchrun reads any option's default from PET_<DEST> (PET_NPROC_PER_NODE=2, ...)."""
    return os.environ.get(f"PET_{dest.upper()}", default)


def _env_flag(dest):
    """The PET_<DEST> default of a flag: set to a non-zero integer, it turns the flag on."""
    value = os.environ.get(f"PET_{dest.upper()}", "0")
    return value.strip().lower() in ("1", "true", "yes")


def build_parser():
    """The argument parser: torchrun's options, with both spellings of each."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Start nproc_per_node copies of a training script on this node with the "
                    "environment torchrun gives its workers (RANK, WORLD_SIZE, LOCAL_RANK, "
                    "MASTER_ADDR, MASTER_PORT, ...). Static (non-elastic) launches only.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    add = parser.add_argument
    add("--nnodes", default=_env_default("nnodes", "1"),
        help="Number of nodes; MIN:MAX is accepted only when MIN == MAX (no elastic range).")
    add("--nproc-per-node", "--nproc_per_node", default=_env_default("nproc_per_node", "1"),
        help="Workers per node: an integer, or 'cpu'/'auto' (the number of CPU cores).")
    add("--rdzv-backend", "--rdzv_backend", default=_env_default("rdzv_backend", "static"),
        help="Rendezvous backend: 'static', or 'c10d' on a single node.")
    add("--rdzv-endpoint", "--rdzv_endpoint", default=_env_default("rdzv_endpoint", ""),
        help="host[:port] of the rendezvous; used as MASTER_ADDR/MASTER_PORT when given "
             "(port 0 picks a free port, on a single node).")
    add("--rdzv-id", "--rdzv_id", default=_env_default("rdzv_id", "none"),
        help="Job id, given to the workers as TORCHELASTIC_RUN_ID.")
    add("--rdzv-conf", "--rdzv_conf", default=_env_default("rdzv_conf", ""),
        help="Rendezvous settings (key=value,...); accepted and ignored.")
    add("--standalone", action="store_true", default=_env_flag("standalone"),
        help="Single-node job: rendezvous on localhost at a free port.")
    add("--max-restarts", "--max_restarts", type=int,
        default=int(_env_default("max_restarts", 0)),
        help="Must be 0: restarting failed workers (elastic training) is not supported.")
    add("--monitor-interval", "--monitor_interval", type=float,
        default=float(_env_default("monitor_interval", 0.1)),
        help="Seconds between checks of the workers' state.")
    add("--start-method", "--start_method", choices=["spawn", "fork", "forkserver"],
        default=_env_default("start_method", "spawn"),
        help="Accepted for compatibility; a script always runs in a new process.")
    add("--role", default=_env_default("role", "default"),
        help="Role name given to the workers as ROLE_NAME.")
    add("-m", "--module", action="store_true", default=_env_flag("module"),
        help="Run the training script as a module, like 'python -m'.")
    add("--no-python", "--no_python", action="store_true", default=_env_flag("no_python"),
        help="Run the training script as a command of its own, without 'python'.")
    add("--run-path", "--run_path", action="store_true", default=_env_flag("run_path"),
        help="Run the training script through runpy.run_path.")
    add("--log-dir", "--log_dir", default=_env_default("log_dir", None),
        help="Directory for the log files of --redirects/--tee (a temporary one if unset).")
    add("-r", "--redirects", default=_env_default("redirects", "0"),
        help="Send workers' streams to log files instead of the console: 0 none, 1 stdout, "
             "2 stderr, 3 both; or per local rank, e.g. 0:1,1:2.")
    add("-t", "--tee", default=_env_default("tee", "0"),
        help="Like --redirects, but the streams also reach the console, each line prefixed "
             "with the worker's role and local rank.")
    add("--local-ranks-filter", "--local_ranks_filter",
        default=_env_default("local_ranks_filter", ""),
        help="Only show these local ranks' output on the console (e.g. 0,1); the others still "
             "go to their log files, and a failure is reported whatever the rank.")
    add("--node-rank", "--node_rank", type=int, default=int(_env_default("node_rank", 0)),
        help="Rank of this node among the nnodes.")
    add("--master-addr", "--master_addr", default=_env_default("master_addr", DEFAULT_MASTER_ADDR),
        help="Address of the node of rank 0 (MASTER_ADDR), unless --rdzv-endpoint is given.")
    add("--master-port", "--master_port", type=int,
        default=int(_env_default("master_port", DEFAULT_MASTER_PORT)),
        help="Port on the node of rank 0 (MASTER_PORT), unless --rdzv-endpoint is given.")
    add("--local-addr", "--local_addr", default=_env_default("local_addr", None),
        help="Accepted for compatibility; unused by a static launch.")
    add("training_script",
        help="The script to run (a module name with -m, a command with --no-python).")
    add("training_script_args", nargs=argparse.REMAINDER,
        help="Arguments passed on to the training script.")
    return parser


# ---------------------------------------------------------------------------------------------
# Launch configuration
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LaunchConfig:
    """Everything the launch needs, checked: built from the command line by build_config."""

    command: list
    entry_name: str
    nproc_per_node: int
    nnodes: int = 1
    node_rank: int = 0
    master_addr: str = DEFAULT_MASTER_ADDR
    master_port: int = DEFAULT_MASTER_PORT
    run_id: str = "none"
    role: str = "default"
    monitor_interval: float = 0.1
    redirects: dict = field(default_factory=dict)
    tees: dict = field(default_factory=dict)
    local_ranks_filter: frozenset | None = None
    log_dir: str | None = None

    @property
    def world_size(self):
        return self.nnodes * self.nproc_per_node

    def global_rank(self, local_rank):
        return self.node_rank * self.nproc_per_node + local_rank


def parse_nproc_per_node(text):
    """An integer, or torchrun's device words; there is no GPU backend, so "gpu" is an error."""
    text = str(text).strip()
    if text in ("cpu", "auto"):
        return os.cpu_count() or 1
    if text in ("gpu", "xpu"):
        raise LaunchConfigError(f"--nproc-per-node={text}: no {text.upper()}s are available to "
                                "this build; give a number of workers or 'cpu'")
    try:
        nproc = int(text)
    except ValueError:
        raise LaunchConfigError(f"--nproc-per-node must be an integer, 'cpu' or 'auto' "
                                f"(got {text!r})") from None
    if nproc < 1:
        raise LaunchConfigError(f"--nproc-per-node must be at least 1 (got {nproc})")
    return nproc


def parse_nnodes(text):
    """A node count; MIN:MAX only when the range is a single count (no elastic membership)."""
    low, sep, high = str(text).strip().partition(":")
    try:
        min_nodes = int(low)
        max_nodes = int(high) if sep else min_nodes
    except ValueError:
        raise LaunchConfigError(f"--nnodes must be N or MIN:MAX (got {text!r})") from None
    if min_nodes != max_nodes:
        raise LaunchConfigError(
            f"--nnodes={text}: elastic training (a range of node counts) is not supported by "
            f"{PROG}; give a fixed number of nodes")
    if min_nodes < 1:
        raise LaunchConfigError(f"--nnodes must be at least 1 (got {text!r})")
    return min_nodes


def parse_endpoint(endpoint, default_port):
    """host[:port] (an IPv6 host in brackets when a port follows) into (host, port)."""
    endpoint = endpoint.strip()
    if endpoint.startswith("["):
        host, _, rest = endpoint[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif endpoint.count(":") == 1:
        host, _, port = endpoint.partition(":")
    else:  # a bare host name, or an IPv6 address without a port
        host, port = endpoint, ""
    if not host:
        raise LaunchConfigError(f"rendezvous endpoint {endpoint!r} has no host")
    if not port:
        return host, default_port
    if not port.isdigit() or int(port) > 65535:
        raise LaunchConfigError(f"rendezvous endpoint {endpoint!r} has an invalid port")
    return host, int(port)


def find_free_port(host):
    """A TCP port that is free on host now (the OS picks it); the workers bind it later."""
    family, kind, proto, _, address = socket.getaddrinfo(host, 0, type=socket.SOCK_STREAM)[0]
    with socket.socket(family, kind, proto) as probe:
        probe.bind(address)
        return probe.getsockname()[1]


def resolve_rendezvous(args, nnodes):
    """(master_addr, master_port, run_id): the static rendezvous that every rank agrees on.

    --standalone is torchrun's shorthand for a c10d rendezvous at localhost:0. A c10d rendezvous
    is honoured on one node only, where it needs no negotiation: across nodes it would assign
    node ranks dynamically, which needs the elastic agent this launcher does not have.
    """
    backend, endpoint, run_id = args.rdzv_backend, args.rdzv_endpoint, args.rdzv_id
    if args.standalone:
        if nnodes != 1:
            raise LaunchConfigError(f"--standalone runs a single node; it cannot be combined "
                                    f"with --nnodes={nnodes}")
        backend, endpoint, run_id = "c10d", "localhost:0", str(uuid.uuid4())
    if backend not in ("static", "c10d"):
        raise LaunchConfigError(
            f"--rdzv-backend={backend} is not supported by {PROG}: only the static rendezvous "
            "(and c10d on a single node) is; give --master-addr/--master-port or "
            "--rdzv-endpoint")
    if backend == "c10d" and nnodes > 1:
        raise LaunchConfigError(
            f"--rdzv-backend=c10d with --nnodes={nnodes} needs dynamic (elastic) rendezvous, "
            f"which {PROG} does not support; use the static backend and give each node its "
            "--node-rank")
    if endpoint:
        default_port = args.master_port if backend == "static" else DEFAULT_C10D_PORT
        master_addr, master_port = parse_endpoint(endpoint, default_port)
    else:
        master_addr, master_port = args.master_addr, args.master_port
    if not 0 <= master_port <= 65535:
        raise LaunchConfigError(f"master port {master_port} is not a TCP port")
    if master_port == 0:
        if nnodes > 1:
            raise LaunchConfigError("port 0 (pick a free port) works on a single node only: "
                                    "the other nodes could not know the port picked")
        master_port = find_free_port(master_addr)
    return master_addr, master_port, run_id


def build_worker_command(args):
    """The argv each worker runs: the script under this interpreter (unbuffered, so output
    reaches the console as it is printed), a module with -m, or a command with --no-python."""
    script, script_args = args.training_script, list(args.training_script_args)
    if args.no_python and args.module:
        raise LaunchConfigError("don't use both the '--no-python' flag and the '--module' flag "
                                "at the same time")
    if args.run_path and (args.module or args.no_python):
        raise LaunchConfigError("'--run-path' runs a script file; it cannot be combined with "
                                "'--module' or '--no-python'")
    if args.run_path:
        return [sys.executable, "-u", "-c", _RUN_PATH_BOOTSTRAP, script, *script_args]
    if args.no_python:
        return [script, *script_args]
    if args.module:
        return [sys.executable, "-u", "-m", script, *script_args]
    return [sys.executable, "-u", script, *script_args]


def parse_std_spec(text, nproc, option):
    """--redirects/--tee: one value (0-3) for every local rank, or rank:value pairs."""
    text = str(text).strip()
    try:
        if ":" not in text:
            return {rank: _std_value(text) for rank in range(nproc)}
        spec = {}
        for item in text.split(","):
            rank, _, value = item.partition(":")
            spec[int(rank)] = _std_value(value)
        return spec
    except ValueError:
        raise LaunchConfigError(f"{option} must be 0-3 or local_rank:value pairs such as "
                                f"0:1,1:2 (got {text!r})") from None


def _std_value(text):
    value = int(text)
    if not 0 <= value <= 3:
        raise ValueError(text)
    return value


def parse_local_ranks_filter(text):
    """--local-ranks-filter: the local ranks whose output reaches the console (None: all)."""
    text = str(text).strip()
    if not text:
        return None
    try:
        return frozenset(int(rank) for rank in text.split(","))
    except ValueError:
        raise LaunchConfigError(f"--local-ranks-filter must be comma-separated local ranks "
                                f"(got {text!r})") from None


def build_config(args):
    """Check the parsed command line and turn it into a LaunchConfig."""
    nproc = parse_nproc_per_node(args.nproc_per_node)
    nnodes = parse_nnodes(args.nnodes)
    if args.max_restarts != 0:
        raise LaunchConfigError(
            f"--max-restarts={args.max_restarts}: elastic restarts are not supported by {PROG}; "
            "a failed worker stops the job (use --max-restarts=0)")
    if not 0 <= args.node_rank < nnodes:
        raise LaunchConfigError(f"--node-rank must be in [0, {nnodes}) for --nnodes={nnodes} "
                                f"(got {args.node_rank})")
    if args.monitor_interval <= 0:
        raise LaunchConfigError("--monitor-interval must be positive")
    master_addr, master_port, run_id = resolve_rendezvous(args, nnodes)
    return LaunchConfig(
        command=build_worker_command(args),
        entry_name=args.training_script,
        nproc_per_node=nproc,
        nnodes=nnodes,
        node_rank=args.node_rank,
        master_addr=master_addr,
        master_port=master_port,
        run_id=run_id,
        role=args.role,
        monitor_interval=args.monitor_interval,
        redirects=parse_std_spec(args.redirects, nproc, "--redirects"),
        tees=parse_std_spec(args.tee, nproc, "--tee"),
        local_ranks_filter=parse_local_ranks_filter(args.local_ranks_filter),
        log_dir=args.log_dir,
    )


# ---------------------------------------------------------------------------------------------
# Worker environment
# ---------------------------------------------------------------------------------------------

def worker_env(config, local_rank, base_env):
    """base_env plus the variables torchrun sets for one worker of a static launch."""
    env = dict(base_env)
    env.update({
        "RANK": str(config.global_rank(local_rank)),
        "WORLD_SIZE": str(config.world_size),
        "LOCAL_RANK": str(local_rank),
        "LOCAL_WORLD_SIZE": str(config.nproc_per_node),
        "GROUP_RANK": str(config.node_rank),
        "GROUP_WORLD_SIZE": str(config.nnodes),
        # One role for the whole job, so the role ranks are the global ones.
        "ROLE_RANK": str(config.global_rank(local_rank)),
        "ROLE_WORLD_SIZE": str(config.world_size),
        "ROLE_NAME": config.role,
        "MASTER_ADDR": config.master_addr,
        "MASTER_PORT": str(config.master_port),
        "TORCHELASTIC_RUN_ID": config.run_id,
        "TORCHELASTIC_RESTART_COUNT": "0",
        "TORCHELASTIC_MAX_RESTARTS": "0",
        # No agent serves a store: rank 0 hosts it at MASTER_ADDR:MASTER_PORT (env://).
        "TORCHELASTIC_USE_AGENT_STORE": "False",
    })
    return env


def base_env_with_thread_default(config, environ, console):
    """os.environ, with OMP_NUM_THREADS=1 when several workers share the node and the user set
    nothing: each worker would otherwise start one thread per core, oversubscribing the CPU."""
    env = dict(environ)
    if config.nproc_per_node > 1 and "OMP_NUM_THREADS" not in env:
        env["OMP_NUM_THREADS"] = "1"
        console.message(
            "\n*****************************************\n"
            "Setting OMP_NUM_THREADS environment variable for each process to be 1 by default, "
            "so that the workers do not oversubscribe the CPU cores; tune it for your "
            "application as needed.\n"
            "*****************************************")
    return env


# ---------------------------------------------------------------------------------------------
# Worker output
# ---------------------------------------------------------------------------------------------

class Console:
    """The launcher's stdout and stderr, shared by the threads that copy the workers' output.

    One lock keeps a prefixed line of one worker from being split by another's, and write
    errors (a closed pipe downstream) are swallowed so that the copying goes on: a worker
    blocked on a full pipe would otherwise hang.
    """

    def __init__(self):
        self._lock = threading.Lock()

    def write(self, stream_name, data):
        target = sys.stdout if stream_name == "stdout" else sys.stderr
        with self._lock:
            try:
                binary = getattr(target, "buffer", None)
                if binary is not None:
                    target.flush()
                    binary.write(data)
                    binary.flush()
                else:
                    target.write(data.decode("utf-8", "replace"))
                    target.flush()
            except (OSError, ValueError):
                pass

    def message(self, text):
        """A message of the launcher itself, on stderr."""
        self.write("stderr", f"{text}\n".encode())


@dataclass(frozen=True)
class StreamRoute:
    """Where one worker stream goes: the console (with a line prefix or none), a log file."""

    name: str
    to_console: bool
    log_path: Path | None = None
    prefix: bytes = b""

    def popen_target(self, always_capture):
        """The Popen stdout/stderr argument: the launcher's own stream when nothing needs to
        see the output, a pipe to a StreamPump otherwise."""
        needs_pump = always_capture or self.log_path is not None or bool(self.prefix)
        if needs_pump:
            return subprocess.PIPE
        return None if self.to_console else subprocess.DEVNULL


def line_prefix(config, local_rank):
    """The prefix of a tee'd line, from torchrun's template variable or its default."""
    template = os.environ.get(PREFIX_TEMPLATE_ENV) or DEFAULT_PREFIX_TEMPLATE
    return Template(template).safe_substitute(
        role_name=config.role, rank=config.global_rank(local_rank), local_rank=local_rank)


def route_streams(config, local_rank, log_dir):
    """(stdout route, stderr route) of one worker, from --redirects, --tee and the filter."""
    redirect = config.redirects.get(local_rank, 0)
    tee = config.tees.get(local_rank, 0)
    shown = config.local_ranks_filter is None or local_rank in config.local_ranks_filter
    routes = []
    for name, bit in (("stdout", STD_OUT), ("stderr", STD_ERR)):
        teed = bool(tee & bit)
        logged = teed or bool(redirect & bit)
        routes.append(StreamRoute(
            name=name,
            to_console=shown and (teed or not logged),
            log_path=log_dir / str(local_rank) / f"{name}.log" if logged else None,
            prefix=line_prefix(config, local_rank).encode() if teed else b"",
        ))
    return tuple(routes)


class StreamPump(threading.Thread):
    """Copies one worker stream to where its route says, and keeps its last lines.

    Output without a prefix is passed on as it arrives (a progress bar without newlines still
    shows); with a prefix, whole lines are. The kept lines let the failure report quote the
    worker's traceback without hiding anything from the user.
    """

    def __init__(self, source, route, console, tail_lines=STDERR_TAIL_LINES):
        super().__init__(name=f"ember-run-{route.name}-pump", daemon=True)
        self._source = source
        self._route = route
        self._console = console
        self._partial_line = b""
        self._log_file = None
        self.tail = collections.deque(maxlen=tail_lines)

    def run(self):
        try:
            if self._route.log_path is not None:
                self._log_file = open(self._route.log_path, "ab")
            fd = self._source.fileno()
            while True:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                self._take(chunk)
            self._take_last_partial_line()
        except OSError:
            pass
        finally:
            if self._log_file is not None:
                self._log_file.close()
            self._source.close()

    def tail_text(self):
        """The kept lines, decoded, without their line ends."""
        return [line.decode("utf-8", "replace").rstrip("\r\n") for line in list(self.tail)]

    def _take(self, chunk):
        if self._log_file is not None:
            self._log_file.write(chunk)
            self._log_file.flush()
        pieces = (self._partial_line + chunk).split(b"\n")
        self._partial_line = pieces.pop()
        lines = [piece + b"\n" for piece in pieces]
        self.tail.extend(lines)
        if not self._route.to_console:
            return
        if self._route.prefix:
            if lines:
                self._console.write(self._route.name,
                                    b"".join(self._route.prefix + line for line in lines))
        else:
            self._console.write(self._route.name, chunk)

    def _take_last_partial_line(self):
        if not self._partial_line:
            return
        self.tail.append(self._partial_line)
        if self._route.to_console and self._route.prefix:
            self._console.write(self._route.name, self._route.prefix + self._partial_line + b"\n")


def prepare_log_dir(config, console):
    """The directory for this attempt's log files, laid out as torchrun's
    (<log_dir>/<run_id>_<random>/attempt_0/<local_rank>/{stdout,stderr}.log); None when no
    stream is redirected or tee'd."""
    if not any(config.redirects.values()) and not any(config.tees.values()):
        return None
    base = Path(config.log_dir) if config.log_dir else Path(
        tempfile.mkdtemp(prefix="ember_elastic_"))
    attempt_dir = base / f"{config.run_id}_{uuid.uuid4().hex[:8]}" / "attempt_0"
    for local_rank in range(config.nproc_per_node):
        (attempt_dir / str(local_rank)).mkdir(parents=True, exist_ok=True)
    console.message(f"{PROG}: worker logs are written under {attempt_dir}")
    return attempt_dir


# ---------------------------------------------------------------------------------------------
# Workers
# ---------------------------------------------------------------------------------------------

@dataclass
class Worker:
    """One started worker process and the threads that copy its output."""

    local_rank: int
    global_rank: int
    process: subprocess.Popen
    pumps: list
    stderr_pump: StreamPump
    failed_at: float | None = None

    def stderr_lines(self):
        return self.stderr_pump.tail_text()


def start_worker(config, local_rank, base_env, log_dir, console):
    """Start one worker in a session of its own.

    Its own session keeps the terminal's Ctrl-C from reaching the workers directly (the
    launcher forwards it, once), and lets the launcher signal the worker's whole process group,
    so that processes the worker started (data-loader workers, say) are stopped with it.
    """
    stdout_route, stderr_route = route_streams(config, local_rank, log_dir)
    process = subprocess.Popen(
        config.command,
        env=worker_env(config, local_rank, base_env),
        stdout=stdout_route.popen_target(always_capture=False),
        stderr=stderr_route.popen_target(always_capture=True),
        start_new_session=True,
    )
    stderr_pump = StreamPump(process.stderr, stderr_route, console)
    pumps = [stderr_pump]
    if process.stdout is not None:
        pumps.append(StreamPump(process.stdout, stdout_route, console))
    for pump in pumps:
        pump.start()
    return Worker(local_rank, config.global_rank(local_rank), process, pumps, stderr_pump)


def signal_worker(worker, signum):
    """Send signum to the worker's process group (to the process alone where there are none)."""
    try:
        if hasattr(os, "killpg"):
            os.killpg(worker.process.pid, signum)
        else:
            worker.process.send_signal(signum)
    except (ProcessLookupError, PermissionError):
        pass


def wait_for_workers(workers, interval, latch):
    """Poll the workers until all have succeeded, one has failed, or the launcher got a signal.

    Returns the failed workers (all those found failed at the same check, by local rank), or []
    when all succeeded or a signal came.
    """
    while latch.signum is None:
        exit_codes = [worker.process.poll() for worker in workers]
        failed = [w for w, code in zip(workers, exit_codes) if code not in (None, 0)]
        if failed:
            now = time.time()
            for worker in failed:
                worker.failed_at = now
            return failed
        if all(code == 0 for code in exit_codes):
            return []
        time.sleep(interval)
    return []


def stop_workers(workers, signum, latch, grace_s=TERMINATE_GRACE_S):
    """Send signum to every worker, then SIGKILL whatever is left after grace_s (or at once
    when another signal reaches the launcher meanwhile: a second Ctrl-C means "now").

    Groups whose leader has already exited are signalled too, for the processes it left.
    """
    signals_seen = latch.count
    for worker in workers:
        signal_worker(worker, signum)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and latch.count == signals_seen:
        if all(worker.process.poll() is not None for worker in workers):
            break
        time.sleep(0.05)
    kill = getattr(signal, "SIGKILL", signal.SIGTERM)
    for worker in workers:
        signal_worker(worker, kill)
    for worker in workers:
        worker.process.wait()


def drain_output(workers, timeout_s=OUTPUT_DRAIN_S):
    """Wait (a bounded time) for the output threads to copy what the workers wrote last."""
    deadline = time.monotonic() + timeout_s
    for worker in workers:
        for pump in worker.pumps:
            pump.join(max(0.0, deadline - time.monotonic()))


class SignalLatch:
    """Records the signals the launcher should pass on to its workers, for the wait loop to see.

    The handlers only record: raising from a handler could interrupt Popen halfway and leave a
    worker behind that nobody stops. Handlers are installed only in the main thread (Python
    allows no other) and the previous ones are restored on exit.
    """

    def __init__(self):
        self.signum = None
        self.count = 0
        self._previous = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for name in _HANDLED_SIGNALS:
                signum = getattr(signal, name, None)
                if signum is not None:
                    self._previous[signum] = signal.signal(signum, self._record)
        return self

    def __exit__(self, *exc_info):
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    def _record(self, signum, frame):
        if self.signum is None:
            self.signum = signum
        self.count += 1


# ---------------------------------------------------------------------------------------------
# Failure report
# ---------------------------------------------------------------------------------------------

def signal_name(signum):
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def last_traceback(lines):
    """The last Python traceback in lines, with the exceptions chained before it, to the end;
    [] when there is none."""
    starts = [i for i, line in enumerate(lines) if line.rstrip().endswith(_TRACEBACK_START)]
    if not starts:
        return []
    index = len(starts) - 1
    while index > 0 and _follows_chain_message(lines, starts[index]):
        index -= 1
    return lines[starts[index]:]


def _follows_chain_message(lines, line_index):
    """Whether the first non-blank line above line_index says the traceback is chained."""
    for line in reversed(lines[:line_index]):
        if line.strip():
            return line.strip() in _CHAINED_EXCEPTION_MESSAGES
    return False


def failure_details(worker):
    """What the report says about why a worker failed: its signal, its traceback, or else the
    last lines it wrote to stderr."""
    exit_code = worker.process.returncode
    stderr_lines = worker.stderr_lines()
    details = []
    if exit_code < 0:
        details.append(f"Signal {-exit_code} ({signal_name(-exit_code)}) received by PID "
                       f"{worker.process.pid}")
    traceback_lines = last_traceback(stderr_lines)
    if traceback_lines:
        return details + traceback_lines
    if details:
        return details
    if stderr_lines:
        return ["(no Python traceback on stderr; its last lines were:)",
                *stderr_lines[-STDERR_QUOTE_LINES:]]
    return ["<N/A> (nothing was written to stderr)"]


def describe_failure(index, worker, host):
    """One entry of the report, in torchrun's layout."""
    when = time.strftime("%Y-%m-%d_%H:%M:%S", time.localtime(worker.failed_at or time.time()))
    first, *rest = failure_details(worker)
    return [
        f"[{index}]:",
        f"  time      : {when}",
        f"  host      : {host}",
        f"  rank      : {worker.global_rank} (local_rank: {worker.local_rank})",
        f"  exitcode  : {worker.process.returncode} (pid: {worker.process.pid})",
        "  error_file: <N/A>",
        f"  traceback : {first}",
        *(f"    {line}" if line.strip() else "" for line in rest),
    ]


def format_failure_report(entry_name, failures, host):
    """The report printed when workers fail: the first failure is the root cause."""
    root, *others = failures
    lines = ["ChildFailedError:", "=" * 60, f"{entry_name} FAILED", "-" * 60, "Failures:"]
    if others:
        for index, worker in enumerate(others, start=1):
            lines += describe_failure(index, worker, host)
    else:
        lines.append("  <NO_OTHER_FAILURES>")
    lines += ["-" * 60, "Root Cause (first observed failure):"]
    lines += describe_failure(0, root, host)
    lines.append("=" * 60)
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------

def launch(config, console=None):
    """Run the workers of one node to the end; returns the launcher's exit status."""
    console = console or Console()
    base_env = base_env_with_thread_default(config, os.environ, console)
    log_dir = prepare_log_dir(config, console)
    workers = []
    with SignalLatch() as latch:
        try:
            for local_rank in range(config.nproc_per_node):
                workers.append(start_worker(config, local_rank, base_env, log_dir, console))
        except OSError as error:
            console.message(f"{PROG}: failed to start local rank {len(workers)} "
                            f"({' '.join(config.command)}): {error}")
            stop_workers(workers, signal.SIGTERM, latch)
            return 1
        failures = wait_for_workers(workers, config.monitor_interval, latch)
        if latch.signum is not None:
            console.message(f"{PROG}: received {signal_name(latch.signum)}; forwarding it to "
                            "the workers and stopping")
            stop_workers(workers, latch.signum, latch)
            drain_output(workers)
            return 1
        if failures:
            stop_workers(workers, signal.SIGTERM, latch)
            drain_output(workers)
            console.message(format_failure_report(config.entry_name, failures,
                                                  socket.gethostname()))
            return 1
        drain_output(workers)
        return 0


def run(args):
    """Launch from parsed arguments (torchrun's run()); returns the exit status."""
    return launch(build_config(args))


def main(args=None):
    """The command line entry point; exits with 1 when a worker fails, 2 on a usage error."""
    parser = build_parser()
    parsed = parser.parse_args(args)
    try:
        config = build_config(parsed)
    except LaunchConfigError as error:
        parser.error(str(error))
    status = launch(config)
    if status:
        sys.exit(status)


if __name__ == "__main__":
    main()
