"""ember.set_flush_denormal: denormal floats read and written as zero (DAZ + FTZ) on the calling
thread and on every thread of the pool, as torch.set_flush_denormal (core/float_mode.h)."""

import threading

import numpy as np
import pytest

import ember

DENORMAL32 = np.float32(1e-40)
DENORMAL64 = 1e-310


@pytest.fixture(autouse=True)
def _restore_mode():
    yield
    ember.set_flush_denormal(False)


def test_returns_true_on_x86_and_flushes_inputs_and_results():
    assert ember.set_flush_denormal(True) is True
    x = ember.tensor([DENORMAL32, 1.0], dtype=ember.float32)
    assert (x * 1.0).tolist() == [0.0, 1.0]
    # a normal input whose result would be denormal comes out as zero
    y = ember.tensor([1e-30], dtype=ember.float32) * 1e-15
    assert y.item() == 0.0
    assert (ember.tensor([DENORMAL64], dtype=ember.float64) * 1.0).item() == 0.0
    assert ember.set_flush_denormal(False) is True
    assert (x * 1.0).tolist()[0] == pytest.approx(float(DENORMAL32), rel=1e-3)
    assert (ember.tensor([DENORMAL64], dtype=ember.float64) * 1.0).item() == DENORMAL64


def test_large_ops_flush_on_every_pool_thread():
    ember.set_num_threads(2)
    data = np.full(1 << 20, DENORMAL32, dtype=np.float32)
    x = ember.from_numpy(data)
    assert ember.set_flush_denormal(True)
    assert ember.count_nonzero(x * 1.0).item() == 0
    assert ember.set_flush_denormal(False)
    assert ember.count_nonzero(x * 1.0).item() == data.size


def test_applies_to_other_python_threads_parallel_regions():
    # A Python thread that runs a parallel op picks up the process-wide mode at its regions.
    ember.set_num_threads(2)
    assert ember.set_flush_denormal(True)
    x = ember.from_numpy(np.full(1 << 20, DENORMAL32, dtype=np.float32))
    result = {}

    def work():
        result["nonzero"] = ember.count_nonzero(x * 1.0).item()

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert result["nonzero"] == 0


def test_mode_must_be_a_bool():
    with pytest.raises(TypeError):
        ember.set_flush_denormal("yes")
