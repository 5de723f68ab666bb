"""ember.hub.load_state_dict_from_url / ember.utils.model_zoo.load_url, on file:// URLs: the
download into the cache, the cache hit, the hash check, and PyTorch's cache directory rules."""

import hashlib
import os

import numpy as np
import pytest

import ember


@pytest.fixture
def checkpoint(tmp_path):
    state = {"w": ember.arange(6.0).reshape(2, 3), "b": ember.ones(3)}
    path = tmp_path / "src" / "model.pth"
    path.parent.mkdir()
    ember.save(state, str(path))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    hashed = tmp_path / "src" / f"model-{digest[:8]}.pth"
    hashed.write_bytes(path.read_bytes())
    return path, hashed, state


def test_download_cache_and_load(tmp_path, checkpoint):
    path, _, state = checkpoint
    cache = tmp_path / "cache"
    loaded = ember.hub.load_state_dict_from_url(path.as_uri(), model_dir=str(cache),
                                                progress=False)
    assert set(loaded) == {"w", "b"}
    np.testing.assert_array_equal(loaded["w"].numpy(), state["w"].numpy())
    assert (cache / "model.pth").exists()
    os.remove(path)  # a second call reads the cache
    again = ember.utils.model_zoo.load_url(path.as_uri(), model_dir=str(cache), progress=False)
    np.testing.assert_array_equal(again["b"].numpy(), state["b"].numpy())


def test_hash_check(tmp_path, checkpoint):
    _, hashed, _ = checkpoint
    ok = ember.hub.load_state_dict_from_url(hashed.as_uri(), model_dir=str(tmp_path / "c1"),
                                            check_hash=True, progress=False)
    assert "w" in ok
    bad = hashed.with_name("model-00000000.pth")
    bad.write_bytes(hashed.read_bytes())
    with pytest.raises(RuntimeError, match="invalid hash value"):
        ember.hub.load_state_dict_from_url(bad.as_uri(), model_dir=str(tmp_path / "c2"),
                                           check_hash=True, progress=False)
    assert not (tmp_path / "c2" / bad.name).exists()  # nothing half-written is left


def test_hub_dir_follows_pytorch(monkeypatch, tmp_path):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    assert ember.hub.get_dir() == str(tmp_path / "th" / "hub")
    ember.hub.set_dir(str(tmp_path / "mine"))
    try:
        assert ember.hub.get_dir() == str(tmp_path / "mine")
    finally:
        ember.hub._hub_dir = None
