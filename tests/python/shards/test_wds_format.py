"""ember.data's shard format: writing and reading round trips, the webdataset package and GNU tar
reading Ember's shards and Ember reading theirs, keys with dots and directories, sources
(pipe:, gzip, http on loopback), and corrupt, truncated, empty and unsorted shards."""

import functools
import gzip
import http.server
import io
import os
import subprocess
import tarfile
import threading

import numpy as np
import pytest

import ember
import ember.data as wds

wds_ref = pytest.importorskip("webdataset")


def samples_of(urls, **kw):
    return list(wds.WebDataset(urls, **kw))


def test_round_trip_fields(tmp_path):
    path = str(tmp_path / "a.tar")
    rows = [{"__key__": f"x{i}", "txt": f"hello {i}", "cls": i, "bin": bytes([i]) * i,
             "json": {"i": i, "l": [1, 2]}, "npy": np.arange(i, dtype=np.int16)} for i in range(7)]
    with wds.TarWriter(path) as w:
        for r in rows:
            w.write(r)
    out = list(wds.WebDataset(path).decode())
    assert [s["__key__"] for s in out] == [r["__key__"] for r in rows]
    for s, r in zip(out, rows):
        assert s["txt"] == r["txt"] and s["cls"] == r["cls"] and s["bin"] == r["bin"]
        assert s["json"] == r["json"]
        np.testing.assert_array_equal(s["npy"], r["npy"])
        assert s["npy"].dtype == np.int16
        assert s["__url__"] == path


def test_gnu_tar_and_tarfile_read_ember_shards(tmp_path):
    path = tmp_path / "g.tar"
    long_key = "d" * 120 + "/deep.dir/" + "k" * 150
    with wds.TarWriter(str(path)) as w:
        w.write({"__key__": "short", "txt": "a"})
        w.write({"__key__": long_key, "txt": "b" * 1000})
    names = subprocess.run(["tar", "-tf", str(path)], capture_output=True, text=True, check=True)
    assert names.stdout.split() == ["short.txt", long_key + ".txt"]
    with tarfile.open(path) as t:
        assert t.extractfile(long_key + ".txt").read() == b"b" * 1000


def test_webdataset_package_reads_ember_shards_identically(small_shards):
    pattern, urls = small_shards
    ours = list(wds.WebDataset(pattern))
    theirs = list(wds_ref.WebDataset(pattern, shardshuffle=False))
    assert len(ours) == len(theirs) == 100
    for a, b in zip(ours, theirs):
        assert a.keys() == b.keys()
        for k in a:
            assert a[k] == b[k], k


def test_ember_reads_webdataset_package_shards_identically(tmp_path):
    pattern = str(tmp_path / "w-%02d.tar")
    with wds_ref.ShardWriter(pattern, maxcount=30) as w:
        for i in range(70):
            w.write({"__key__": f"dir.{i % 3}/s{i:03d}", "npy": np.eye(2) * i, "cls": i,
                     "seg.png": b"\x89PNG fake", "txt": "t" * i})
    urls = [pattern % i for i in range(3)]
    ours = list(wds.WebDataset(urls).decode())
    theirs = list(wds_ref.WebDataset(urls, shardshuffle=False).decode())
    assert len(ours) == len(theirs) == 70
    for a, b in zip(ours, theirs):
        assert a.keys() == b.keys()
        assert a["__key__"] == b["__key__"] and a["cls"] == b["cls"] and a["txt"] == b["txt"]
        assert a["seg.png"] == b["seg.png"]  # multi-part extension, not an image handler's
        np.testing.assert_array_equal(a["npy"], b["npy"])


def test_keys_with_dots_directories_and_case(tmp_path):
    path = tmp_path / "k.tar"
    with tarfile.open(path, "w", format=tarfile.GNU_FORMAT) as t:
        for name, data in [("a.b/c.d/x.JPG", b"1"), ("a.b/c.d/x.seg.PNG", b"2"),
                           ("plain", b"skip: no extension"), (".hidden", b"skip"),
                           ("__meta__", b"skip"), ("__dir__/m.txt", b"skip"),
                           ("y.txt", b"3"), ("a.b/c.d/x2.txt", b"4")]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
        d = tarfile.TarInfo("somedir")
        d.type = tarfile.DIRTYPE
        t.addfile(d)
    meta = ("__url__", "__local_path__")
    ours = [{k: v for k, v in s.items() if k not in meta} for s in wds.WebDataset(str(path))]
    theirs = [{k: v for k, v in s.items() if k not in meta}
              for s in wds_ref.WebDataset(str(path), shardshuffle=False)]
    assert ours == theirs
    assert ours[0] == {"__key__": "a.b/c.d/x", "jpg": b"1", "seg.png": b"2"}


def test_unsorted_shard_gives_a_sample_per_run_of_a_key(tmp_path):
    path = tmp_path / "u.tar"
    with tarfile.open(path, "w") as t:
        for name in ["a.x", "b.x", "a.y"]:
            info = tarfile.TarInfo(name)
            info.size = 1
            t.addfile(info, io.BytesIO(b"1"))
    keys = [s["__key__"] for s in wds.WebDataset(str(path))]
    assert keys == ["a", "b", "a"]  # as webdataset: grouping is by consecutive names


def test_duplicate_extension_in_a_sample_raises(tmp_path):
    path = tmp_path / "dup.tar"
    with tarfile.open(path, "w") as t:
        for name in ["a.x", "a.x"]:
            info = tarfile.TarInfo(name)
            info.size = 1
            t.addfile(info, io.BytesIO(b"1"))
    with pytest.raises(wds.ShardError, match="two files with extension 'x'"):
        list(wds.WebDataset(str(path)))


def _corrupt(tmp_path, name, transform, source):
    data = open(source, "rb").read()
    path = tmp_path / name
    path.write_bytes(transform(data))
    return str(path)


@pytest.mark.parametrize("kind", ["truncated_data", "truncated_header", "bad_checksum",
                                  "garbage"])
def test_corrupt_shard_raises_with_url_and_offset(tmp_path, small_shards, kind):
    _, urls = small_shards
    transforms = {
        "truncated_data": lambda d: d[:512 * 7 + 100],
        "truncated_header": lambda d: d[:512 * 6 + 200],
        "bad_checksum": lambda d: d[:512 * 6 + 10] + b"Z" + d[512 * 6 + 11:],
        "garbage": lambda d: bytes(np.random.default_rng(0).integers(0, 256, 5000, np.uint8)),
    }
    url = _corrupt(tmp_path, kind + ".tar", transforms[kind], urls[0])
    with pytest.raises(wds.ShardError) as info:
        list(wds.WebDataset(url))
    assert info.value.url == url
    assert url in str(info.value)
    assert info.value.offset == (0 if kind == "garbage" else 512 * 6)


def test_handlers_skip_bad_shards_and_count_them(tmp_path, small_shards):
    _, urls = small_shards
    bad = _corrupt(tmp_path, "bad.tar", lambda d: d[:512 * 7 + 100], urls[1])
    wds.report.reset()
    keys = [s["__key__"] for s in wds.WebDataset([urls[0], bad, urls[2]],
                                                handler=wds.ignore_and_continue)]
    # The good samples before the damage are kept, the rest of the bad shard is skipped.
    assert keys == [f"k{i:05d}" for i in range(20)] + ["k00020"] + \
        [f"k{i:05d}" for i in range(40, 60)]
    assert wds.report.shards == 1
    with pytest.warns(UserWarning, match="truncated"):
        n = len(list(wds.WebDataset([bad, urls[2]], handler=wds.warn_and_continue)))
    assert n == 21
    assert len(list(wds.WebDataset([urls[0], bad, urls[2]], handler=wds.ignore_and_stop))) == 21


def test_missing_and_empty_shards(tmp_path, small_shards):
    _, urls = small_shards
    with pytest.raises(wds.ShardError, match="cannot open"):
        list(wds.WebDataset(str(tmp_path / "nope.tar")))
    empty = tmp_path / "empty.tar"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="No samples"):
        list(wds.WebDataset(str(empty)))
    assert list(wds.WebDataset(str(empty), empty_check=False)) == []
    assert len(list(wds.WebDataset([str(empty), urls[0]]))) == 20


def test_pipe_and_gzip_sources(tmp_path, small_shards):
    _, urls = small_shards
    ref = [s["__key__"] for s in wds.WebDataset(urls[:2])]
    gz = tmp_path / "a.tar.gz"
    gz.write_bytes(gzip.compress(open(urls[0], "rb").read()))
    sources = [[f"pipe:cat {urls[0]}", f"pipe:cat {urls[1]}"],
               [str(gz), f"pipe:gzip -c {urls[1]}"], [f"file:{urls[0]}", urls[1]]]
    for pair in sources:
        assert [s["__key__"] for s in wds.WebDataset(pair)] == ref
    with pytest.raises(wds.ShardError, match="exited with status 3"):
        list(wds.WebDataset(f"pipe:cat {urls[0]}; exit 3"))


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_http_on_loopback(small_shards):
    if not ember._C._data.http_supported():
        pytest.fail("this build has no libcurl: http(s) shards cannot be streamed")
    _, urls = small_shards
    directory = os.path.dirname(urls[0])
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_QuietHandler, directory=directory))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        names = [os.path.basename(u) for u in urls]
        got = [s["__key__"] for s in wds.WebDataset(base + "{" + ",".join(names) + "}")]
        assert got == [s["__key__"] for s in wds.WebDataset(urls)]
        with pytest.raises(wds.ShardError, match="404"):
            list(wds.WebDataset(base + "missing.tar"))
    finally:
        server.shutdown()
        server.server_close()


def test_brace_expansion_matches_braceexpand():
    braceexpand = pytest.importorskip("braceexpand").braceexpand
    for pattern in ["a-{000..012}.tar", "x{a,b,{c,d}}y", "s{1..3}-{08..10}", "{9..7}",
                    "plain", "f{a..c}", "{1..10..3}", "pre{,x}post", "{x}"]:
        assert wds.braceexpand(pattern) == list(braceexpand(pattern)), pattern
    assert wds.expand_urls("a{0..1}::b{2..3}") == ["a0", "a1", "b2", "b3"]
    with pytest.raises(TypeError, match="shard urls"):
        wds.expand_urls(3)


def test_tar_writer_gzip_and_index_sidecars(tmp_path):
    path = tmp_path / "c.tar.gz"
    with wds.TarWriter(str(path)) as w:
        w.write({"__key__": "a", "txt": "x"})
    assert [s["txt"] for s in wds.WebDataset(str(path))] == [b"x"]
    with pytest.raises(ValueError, match="index=True needs an uncompressed"):
        wds.TarWriter(str(tmp_path / "d.tar.gz"), index=True)
    with pytest.raises(ValueError, match="__key__"):
        wds.TarWriter(io.BytesIO()).write({"txt": "x"})
    with pytest.raises(ValueError, match="no encoder"):
        wds.TarWriter(io.BytesIO()).write({"__key__": "a", "weird": object()})


def test_index_shards_and_sharded_dataset(tmp_path, plain_shards):
    pattern, urls = plain_shards
    with pytest.raises(ValueError, match="sidecar"):
        wds.ShardedDataset(pattern)
    combined = tmp_path / "all.index.json"
    index = wds.index_shards(pattern, output=str(combined))
    assert [len(index[u]) for u in urls] == [25] * 4
    ds = wds.ShardedDataset(pattern, index=str(combined), decode=[])
    assert len(ds) == 100
    for i in [0, 24, 25, 57, 99, -1]:
        sample = ds[i]
        assert sample["cls"] == i % 100 and sample["__key__"] == f"k{i % 100:05d}"
    with pytest.raises(IndexError, match="out of range"):
        ds[100]
    # Exact global shuffling through any sampler. The readers the parent opened above are not
    # shared with the forked workers (their file offsets would be), so every epoch reads cleanly.
    loader = ember.utils.data.DataLoader(ds, batch_size=None, shuffle=True, num_workers=2)
    for _ in range(3):
        assert sorted(s["cls"] for s in loader) == list(range(100))


def test_stale_sidecar_index_is_refused(tmp_path):
    path = tmp_path / "s.tar"
    with wds.TarWriter(str(path), index=True) as w:
        w.write({"__key__": "a", "txt": "x"})
    with open(path, "ab") as f:
        f.write(b"\0" * 512)
    with pytest.raises(ValueError, match="stale"):
        list(wds.WebDataset(str(path)))
