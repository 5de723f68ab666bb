"""How ``init_process_group`` finds its peers: ``init_method`` (``env://``, ``tcp://host:port``,
``file:///path``) or a given store, turned into (store, rank, world size), as
torch.distributed.rendezvous does."""

from __future__ import annotations

import os
import socket
from urllib.parse import parse_qs, urlparse

from .. import _C

_LOOPBACK = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}


def _int_or(value, fallback, what):
    if value is None or value == "":
        return fallback
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"init_process_group: {what} must be an integer, got {value!r}") from None


def _env(name, needed_for):
    value = os.environ.get(name)
    if value is None:
        raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: "
                         f"environment variable {name} expected, but not set ({needed_for})")
    return value


def rendezvous(init_method, rank, world_size, timeout_s):
    """(store, rank, world size, master host) for ``init_method``."""
    url = urlparse(init_method)
    query = {k: v[-1] for k, v in parse_qs(url.query).items()}
    rank = _int_or(query.get("rank"), rank, "rank")
    world_size = _int_or(query.get("world_size"), world_size, "world_size")
    if url.scheme == "env":
        if rank < 0:
            rank = _int_or(_env("RANK", "the rank of this process"), -1, "RANK")
        if world_size < 0:
            world_size = _int_or(_env("WORLD_SIZE", "the number of processes"), -1,
                                 "WORLD_SIZE")
        host = _env("MASTER_ADDR", "the address of the rank-0 process")
        port = _int_or(_env("MASTER_PORT", "a free port on the rank-0 process"), 0,
                       "MASTER_PORT")
    elif url.scheme == "tcp":
        if url.hostname is None or url.port is None:
            raise ValueError(f"init_process_group: {init_method!r} needs a host and a port "
                             "(tcp://host:port)")
        host, port = url.hostname, url.port
    elif url.scheme == "file":
        path = url.path
        if not path:
            raise ValueError(f"init_process_group: {init_method!r} names no file")
        _check_rank(rank, world_size)
        store = _C._distributed.FileStore(path, world_size, timeout_s)
        return store, rank, world_size, "127.0.0.1"
    else:
        raise ValueError(f"init_process_group: unknown init_method {init_method!r}; use env://, "
                         "tcp://host:port or file:///path")
    _check_rank(rank, world_size)
    store = _C._distributed.TCPStore(host, port, world_size, rank == 0, timeout_s, True)
    return store, rank, world_size, host


def _check_rank(rank, world_size):
    if world_size < 1:
        raise ValueError(f"init_process_group: world_size must be >= 1, got {world_size}")
    if not 0 <= rank < world_size:
        raise ValueError(f"init_process_group: rank {rank} is not in [0, {world_size})")


def gloo_address(master_host):
    """(hostname, interface) Gloo binds to: GLOO_SOCKET_IFNAME when set; loopback when the
    master is local; else this machine's name when it resolves, as PyTorch does."""
    interface = os.environ.get("GLOO_SOCKET_IFNAME", "")
    if interface:
        return "", interface.split(",")[0]
    if master_host in _LOOPBACK or master_host.startswith("127."):
        return "127.0.0.1", ""
    name = socket.gethostname()
    try:
        socket.getaddrinfo(name, None)
    except OSError:
        return "127.0.0.1", ""
    return name, ""
