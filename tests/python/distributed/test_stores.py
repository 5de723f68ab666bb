"""The stores (HashStore, FileStore, TCPStore, PrefixStore): set/get/add/check/delete/compare_set
and timeouts, across threads and processes, and their errors."""

import datetime
import socket
import subprocess
import sys
import threading
import time

import pytest

import ember.distributed as dist

pytestmark = pytest.mark.skipif(not dist.is_available(),
                                reason="this build has no Gloo (apt install libgloo-dev)")


def _exercise(store):
    store.set("a", "1")
    store.set("b", b"\x00\xffbytes")
    assert store.get("a") == b"1" and store.get("b") == b"\x00\xffbytes"
    assert store.add("counter", 5) == 5 and store.add("counter", -2) == 3
    assert store.get("counter") == b"3"  # counters are decimal text, as PyTorch's
    assert store.check(["a", "b"]) and not store.check(["a", "missing"])
    assert store.compare_set("a", "1", "2") == b"2"
    assert store.compare_set("a", "1", "3") == b"2"  # expectation not met: unchanged
    assert store.compare_set("new", "", "x") == b"x"  # missing key, empty expectation: set
    assert store.delete_key("b") and not store.delete_key("b")
    with pytest.raises(ValueError, match="not an integer"):
        store.add("a", 1) if store.get("a") != b"2" else store.add("new", 1)
    store.wait(["a"])
    store.set_timeout(0.2)
    start = time.monotonic()
    with pytest.raises(dist.DistStoreError, match="missing"):
        store.get("missing")
    with pytest.raises(dist.DistStoreError, match="timed out"):
        store.wait(["missing"], 0.1)
    assert time.monotonic() - start < 5
    assert isinstance(dist.DistStoreError("x"), RuntimeError)


def test_hash_store():
    store = dist.HashStore()
    _exercise(store)
    assert store.num_keys() >= 3


def test_hash_store_get_waits_for_another_thread():
    store = dist.HashStore()
    threading.Timer(0.1, lambda: store.set("late", "v")).start()
    assert store.get("late") == b"v"


def test_prefix_store_keeps_groups_apart():
    base = dist.HashStore()
    a, b = dist.PrefixStore("a", base), dist.PrefixStore("b", base)
    a.set("k", "1")
    b.set("k", "2")
    assert a.get("k") == b"1" and b.get("k") == b"2" and base.get("a/k") == b"1"
    assert a.check(["k"]) and not a.check(["other"])
    _exercise(dist.PrefixStore("p", dist.HashStore()))


def test_file_store_between_objects_and_processes(tmp_path):
    path = str(tmp_path / "store")
    first = dist.FileStore(path, 2)
    second = dist.FileStore(path, 2)
    _exercise(first)
    assert second.get("a") == b"2" and second.add("counter", 1) == 4
    code = (f"import ember.distributed as d; s = d.FileStore({path!r}, -1); "
            "s.set('from_child', 'hi'); print(s.add('counter', 10))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "14" and first.get("from_child") == b"hi"
    del first, second  # the last of world_size stores removes the file
    import gc

    gc.collect()
    assert not (tmp_path / "store").exists()


def test_file_store_rejects_a_file_that_is_not_a_store(tmp_path):
    bad = tmp_path / "bad"
    bad.write_bytes(b"Xgarbage" * 10)
    store = dist.FileStore(str(tmp_path / "ok"), -1)
    store.set("k", "v")
    with pytest.raises(dist.DistStoreError, match="not a store file"):
        dist.FileStore(str(bad), -1)
    truncated = tmp_path / "truncated"
    truncated.write_bytes((tmp_path / "ok").read_bytes()[:-1])
    resumed = dist.FileStore(str(truncated), -1)  # a record cut short is dropped
    assert not resumed.check(["k"])
    resumed.set("k", "again")
    assert resumed.get("k") == b"again"


def test_tcp_store_server_and_clients():
    master = dist.TCPStore("127.0.0.1", 0, 3, True, timeout=30, wait_for_workers=False)
    port = master.port
    assert port > 0
    clients = [dist.TCPStore("127.0.0.1", port, 3, False, timeout=30) for _ in range(2)]
    _exercise(master)
    assert clients[0].get("a") == b"2"
    # get() on one client waits for a set() from another
    threading.Timer(0.2, lambda: clients[1].set("later", "v")).start()
    assert clients[0].get("later") == b"v"
    # after a timeout the client reconnects and goes on
    clients[0].set_timeout(0.1)
    with pytest.raises(dist.DistStoreError):
        clients[0].get("never")
    clients[0].set_timeout(30)
    assert clients[0].get("later") == b"v"
    # many concurrent adders
    threads = [threading.Thread(target=lambda c=c: [c.add("n", 1) for _ in range(100)])
               for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert master.add("n", 0) == 200


def test_timeouts_as_timedelta_and_world_size_none_as_pytorch(tmp_path):
    # PyTorch's stores take timeouts as datetime.timedelta, and TCPStore's world_size defaults
    # to None (unknown).
    td = datetime.timedelta(seconds=0.2)
    master = dist.TCPStore("127.0.0.1", 0, None, True, timeout=datetime.timedelta(seconds=30),
                           wait_for_workers=False)
    client = dist.TCPStore("127.0.0.1", master.port, is_master=False,
                           timeout=datetime.timedelta(minutes=1))
    assert client.timeout_seconds == 60
    for store in (master, dist.FileStore(str(tmp_path / "fs"), 1, timeout=td),
                  dist.HashStore(timeout=td)):
        store.set_timeout(td)
        assert store.timeout_seconds == 0.2
        with pytest.raises(dist.DistStoreError, match="timed out"):
            store.wait(["missing"], datetime.timedelta(milliseconds=50))
    with pytest.raises(TypeError, match="timedelta or seconds"):
        dist.HashStore(timeout="10s")


def test_tcp_store_waits_for_workers_and_reports_a_wrong_world_size():
    with pytest.raises(dist.DistStoreError, match="waiting for 2 processes"):
        dist.TCPStore("127.0.0.1", 0, 2, True, timeout=0.5, wait_for_workers=True)


def test_tcp_store_errors():
    with socket.socket() as s:
        s.bind(("", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(dist.DistNetworkError, match="MASTER_PORT"):
            dist.TCPStore("127.0.0.1", port, 1, True, timeout=1)
    with socket.socket() as s:  # nobody listens there now
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.monotonic()
    with pytest.raises(dist.DistNetworkError, match="timed out"):
        dist.TCPStore("127.0.0.1", port, 2, False, timeout=0.5)
    assert time.monotonic() - start < 5
    with pytest.raises(ValueError, match="port"):
        dist.TCPStore("127.0.0.1", 70000, 1, True)
