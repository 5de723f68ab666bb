"""ember.data decoders against NumPy, PIL and the webdataset package: npy over dtypes and
layouts, npz, text, json, class labels, gzip fields, pickles (refused unless asked), safetensors,
and images for every spec (JPEG in C++ must give PIL's pixels)."""

import gzip
import io
import pickle

import numpy as np
import pytest

import ember
import ember.data as wds

PIL = pytest.importorskip("PIL.Image")
wds_ref = pytest.importorskip("webdataset")


def _npy_bytes(a):
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


@pytest.mark.parametrize("array", [
    np.arange(12, dtype=np.float32).reshape(3, 4),
    np.asfortranarray(np.arange(12, dtype=np.float64).reshape(3, 4)),
    np.array(5, dtype=np.int64),
    np.zeros((0, 3), dtype=np.uint8),
    np.array([True, False]),
    np.arange(6, dtype=">i4"),
    np.array([1 + 2j], dtype=np.complex64),
    np.array([np.nan, np.inf, -0.0], dtype=np.float16),
    np.array(["ab", "c"]),
    np.zeros(3, dtype=[("a", "<i4"), ("b", "<f8")]),
])
def test_npy_matches_numpy(array):
    got = wds.Decoder([]).decode1("npy", _npy_bytes(array))
    assert got.dtype == array.dtype and got.shape == array.shape
    np.testing.assert_array_equal(got, array)
    assert got.flags.writeable
    assert got.flags.f_contiguous == array.flags.f_contiguous or array.ndim < 2


def test_npy_refuses_objects_and_truncation():
    with pytest.raises(ValueError, match="object arrays"):
        ember._C._data.decode_npy(_npy_bytes(np.array([{}], dtype=object)))
    data = _npy_bytes(np.arange(10, dtype=np.float64))
    with pytest.raises(ValueError, match="truncated data"):
        ember._C._data.decode_npy(data[:-8])
    with pytest.raises(ValueError, match="bad magic"):
        ember._C._data.decode_npy(b"not numpy at all")


def test_basic_decoders_match_webdataset():
    fields = {"txt": "héllo".encode(), "cls": b"42", "json": b'{"a": [1, 2]}', "id": b" 7",
              "npz": None, "bin": b"\x00\x01", "txt.gz": gzip.compress(b"zipped"),
              "npy.gz": gzip.compress(_npy_bytes(np.eye(2)))}
    buf = io.BytesIO()
    np.savez(buf, x=np.arange(3), y=np.ones(2))
    fields["npz"] = buf.getvalue()
    sample = {"__key__": "k", "__url__": "u", **fields}
    ours = wds.Decoder([])(dict(sample))
    theirs = wds_ref.autodecode.Decoder([])(dict(sample))
    assert ours.keys() == theirs.keys()
    for k in ours:
        if isinstance(ours[k], dict):
            assert ours[k].keys() == theirs[k].keys()
            for kk in ours[k]:
                np.testing.assert_array_equal(ours[k][kk], theirs[k][kk])
        elif isinstance(ours[k], np.ndarray):
            np.testing.assert_array_equal(ours[k], theirs[k])
        else:
            assert ours[k] == theirs[k], k


def test_pickles_are_not_unpickled_unless_asked():
    blob = pickle.dumps({"x": 1})
    sample = {"__key__": "k", "pyd": blob}
    with pytest.warns(UserWarning, match="allow_pickle=True"):
        wds._decode._warned_pickle.clear()
        assert wds.Decoder([])(dict(sample))["pyd"] == blob
    assert wds.Decoder([], allow_pickle=True)(dict(sample))["pyd"] == {"x": 1}


def test_safetensors_and_pth_fields():
    t = ember.arange(6, dtype=ember.float32).reshape(2, 3)
    buf = io.BytesIO()
    ember.save({"w": t}, buf, format="safetensors")
    out = wds.Decoder([])({"__key__": "k", "safetensors": buf.getvalue()})["safetensors"]
    assert ember.equal(out["w"], t)
    buf = io.BytesIO()
    ember.save({"w": t}, buf)
    assert ember.equal(wds.Decoder([])({"__key__": "k", "pth": buf.getvalue()})["pth"]["w"], t)


def _jpeg(mode, size=(37, 23), quality=90, subsampling=None, seed=0):
    rng = np.random.default_rng(seed)
    channels = {"L": 1, "RGB": 3, "CMYK": 4}[mode]
    h, w = size
    yy, xx = np.mgrid[0:h, 0:w]
    base = np.stack([(xx * 255 // w), (yy * 255 // h), ((xx + yy) * 3) % 256,
                     (xx * yy) % 256], axis=-1)[..., :channels]
    pixels = np.clip(base + rng.integers(-20, 20, base.shape), 0, 255).astype(np.uint8)
    image = PIL.fromarray(pixels[..., 0] if channels == 1 else pixels, mode)
    buf = io.BytesIO()
    kw = {} if subsampling is None else {"subsampling": subsampling}
    image.save(buf, "JPEG", quality=quality, **kw)
    return buf.getvalue()


# Chroma subsampling 4:4:4 / 4:2:2 / 4:2:0 for colour JPEGs; gray and CMYK (which goes to PIL).
@pytest.mark.parametrize("source_mode,subsampling", [("RGB", 0), ("RGB", 1), ("RGB", 2),
                                                     ("L", None), ("CMYK", None)])
@pytest.mark.parametrize("spec", ["l8", "rgb8", "rgba8", "l", "rgb", "rgba", "torchl8",
                                  "torchrgb8", "torchrgb", "torchrgba", "pil", "pill"])
def test_jpeg_specs_equal_pil(source_mode, subsampling, spec):
    data = _jpeg(source_mode, subsampling=subsampling)
    ours = wds.imagehandler(spec)(".jpg", data)
    if spec.startswith("pil"):
        theirs = wds_ref.autodecode.imagehandler(spec)(".jpg", data)
        assert ours.mode == theirs.mode
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
        return
    if spec.startswith("torch"):
        # webdataset's torch specs need torch: compare with its NumPy spec, channels first.
        assert isinstance(ours, ember.Tensor)
        ours = ours.numpy()
        theirs = wds_ref.autodecode.imagehandler(spec[5:])(".jpg", data)
        if theirs.ndim == 3:
            theirs = theirs.transpose(2, 0, 1)
    else:
        theirs = wds_ref.autodecode.imagehandler(spec)(".jpg", data)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_array_equal(ours, theirs)


def test_png_and_other_formats_go_through_pil():
    image = PIL.fromarray(np.arange(60, dtype=np.uint8).reshape(4, 5, 3), "RGB")
    buf = io.BytesIO()
    image.save(buf, "PNG")
    out = wds.imagehandler("torchrgb8")(".png", buf.getvalue())
    np.testing.assert_array_equal(out.numpy(), np.asarray(image).transpose(2, 0, 1))


def test_corrupt_and_truncated_jpeg_raise():
    data = _jpeg("RGB", size=(64, 64))
    with pytest.raises(ValueError, match="corrupt JPEG"):
        wds.imagehandler("rgb8")(".jpg", data[: len(data) // 2])
    with pytest.raises(ValueError, match="corrupt JPEG"):
        wds.imagehandler("rgb8")(".jpg", b"\xff\xd8garbage" * 10)
    sample = {"__key__": "k", "__url__": "u", "jpg": b"nope"}
    with pytest.raises(wds.DecodingError, match="'jpg' of sample 'k'"):
        wds.Decoder([wds.imagehandler("rgb8")])(sample)


def test_user_handlers_and_only_and_partial():
    seen = []

    def upper_txt(key, data):
        seen.append(key)
        return data.decode().upper() if key.endswith(".txt") else None

    sample = {"__key__": "k", "txt": b"ab", "cls": b"3", "seg.txt": b"cd"}
    out = wds.Decoder([upper_txt], only=["txt", "seg.txt"])(dict(sample))
    assert out == {"__key__": "k", "txt": "AB", "cls": b"3", "seg.txt": "CD"}
    handler = wds.handle_extension("seg.txt", lambda d: d[::-1])
    assert wds.Decoder([handler])(dict(sample))["seg.txt"] == b"dc"
    with pytest.raises(wds.DecodingError):
        wds.Decoder([])({"__key__": "k", "cls": 3})
    assert wds.Decoder([], partial=True)({"__key__": "k", "cls": 3}) == {"__key__": "k", "cls": 3}
    with pytest.raises(ValueError, match="unknown image spec"):
        wds.imagehandler("rgb16")


# -- JPEGs decoded together (Note [Decoding ahead]) ----------------------------------------------
def test_decode_jpegs_equals_decode_jpeg_one_by_one():
    from ember import _C

    blobs = [_jpeg("RGB", size=(16 + i, 9 + 2 * i), subsampling=i % 3, seed=i) for i in range(7)]
    blobs += [_jpeg("L", seed=9), _jpeg("CMYK"), blobs[0][:40], b"", b"\xff\xd8xx"]
    for mode in ("l", "rgb", "rgba"):
        for as_float in (False, True):
            for chw in (False, True):
                together = _C._data.decode_jpegs(blobs, mode, as_float, chw)
                assert len(together) == len(blobs)
                for blob, got in zip(blobs, together):
                    try:
                        alone = _C._data.decode_jpeg(blob, mode, as_float, chw)
                    except ValueError:
                        alone = None  # left to the caller, which raises it decoding alone
                    if alone is None:
                        assert got is None
                    else:
                        assert got.dtype == alone.dtype and got.shape == alone.shape
                        assert got.flags.writeable and got.flags.c_contiguous
                        np.testing.assert_array_equal(got, alone)
    assert _C._data.decode_jpegs([], "rgb", True, True) == []
    with pytest.raises(TypeError, match="entry 1 is str, not bytes"):
        _C._data.decode_jpegs([blobs[0], "x"], "rgb")
    with pytest.raises(ValueError, match="mode must be"):
        _C._data.decode_jpegs(blobs, "cmyk")


@pytest.fixture(scope="module")
def jpeg_shards(tmp_path_factory):
    """3 shards x 12 samples (jpg of varying sizes, cls); sample 17's JPEG is corrupt."""
    directory = tmp_path_factory.mktemp("jpegs")
    pattern = str(directory / "j-%03d.tar")
    with wds.ShardWriter(pattern, maxcount=12, mtime=0) as writer:
        for n in range(36):
            data = _jpeg("RGB" if n % 5 else "L", size=(20 + n % 7, 31 - n % 4), seed=n)
            writer.write({"__key__": f"k{n:03d}", "jpg": data[:50] if n == 17 else data,
                          "cls": n})
    return str(directory / "j-{000..002}.tar")


def _jpeg_pipeline(pattern, handler=wds.reraise_exception, shuffle=False, spec="torchrgb"):
    ds = wds.WebDataset(pattern, shardshuffle=False, seed=3)
    ds = ds.decode(spec, handler=handler)
    if shuffle:
        ds = ds.shuffle(10)
    return ds.to_tuple("jpg", "cls", "__key__")


def _values(items):
    return [(np.asarray(x.numpy() if isinstance(x, ember.Tensor) else x).tobytes(), c, k)
            for x, c, k in items]


@pytest.fixture
def threads():
    """Runs the test body at 1 thread and at 3 (decoding ahead), restoring the count."""
    before = ember.get_num_threads()
    yield lambda n: ember.set_num_threads(n)
    ember.set_num_threads(before)


@pytest.mark.parametrize("spec", ["torchrgb", "rgb8", "pil"])
def test_decoding_ahead_gives_the_same_samples_and_skips(jpeg_shards, threads, spec):
    threads(1)
    one = _values(_jpeg_pipeline(jpeg_shards, wds.ignore_and_continue, spec=spec)) \
        if spec != "pil" else None
    keys_one = [k for _, _, k in _jpeg_pipeline(jpeg_shards, wds.ignore_and_continue, spec=spec)]
    threads(3)
    it = _jpeg_pipeline(jpeg_shards, wds.ignore_and_continue, spec=spec)
    assert [k for _, _, k in it] == keys_one
    assert len(keys_one) == 35 and "k017" not in keys_one
    if one is not None:
        assert _values(_jpeg_pipeline(jpeg_shards, wds.ignore_and_continue, spec=spec)) == one


def test_decoding_ahead_raises_at_the_same_sample(jpeg_shards, threads):
    for n in (1, 3):
        threads(n)
        got = []
        with pytest.raises(wds.DecodingError, match="'jpg' of sample 'k017'"):
            for sample in _jpeg_pipeline(jpeg_shards):
                got.append(sample[2])
        assert got == [f"k{i:03d}" for i in range(17)]


def test_decoding_ahead_defers_an_upstream_error_until_its_turn(threads):
    threads(3)
    good = _jpeg("RGB", seed=1)

    def source():
        for n in range(5):
            yield {"__key__": f"k{n}", "jpg": good}
        raise OSError("the source broke")

    got = []
    with pytest.raises(OSError, match="the source broke"):
        for sample in wds.DataPipeline(source, wds.decode("rgb8")):
            got.append(sample["__key__"])
    assert got == [f"k{n}" for n in range(5)]


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("stop_at", [1, 5, 13, 30])
def test_resume_while_decoding_ahead(jpeg_shards, threads, shuffle, stop_at):
    threads(3)
    make = lambda: _jpeg_pipeline(jpeg_shards, wds.ignore_and_continue, shuffle=shuffle)  # noqa: E731
    reference = _values(make())
    ds = make()
    it = iter(ds)
    head = _values([next(it) for _ in range(stop_at)])
    state = ds.state_dict()
    assert state["mode"] == "exact"
    if not shuffle and stop_at < 30:  # samples read ahead are in the decode stage's state
        assert state["stages"][1]["positions"]
    del it
    threads(1)  # the state does not depend on the thread count
    resumed = make()
    resumed.load_state_dict(state)
    assert head + _values(resumed) == reference


def test_resume_at_the_end_of_an_epoch_goes_on_to_the_next(jpeg_shards, threads):
    threads(3)

    def make():
        ds = wds.WebDataset(jpeg_shards, shardshuffle=False, seed=3)
        return ds.decode("rgb8", handler=wds.ignore_and_continue).to_tuple("__key__").repeat(2)

    reference = [k for (k,) in make()]
    assert len(reference) == 70
    ds = make()
    it = iter(ds)
    head = [next(it)[0] for _ in range(30)]  # the rest of epoch 0 is read ahead
    state = ds.state_dict()
    resumed = make()
    resumed.load_state_dict(state)
    assert head + [k for (k,) in resumed] == reference
