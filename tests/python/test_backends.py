"""ember.backends and ember.set/get_float32_matmul_precision: defaults, attribute assignment read
back, validation, the flags() context managers, the disable_global_flags guard, thread safety of
compound updates, and parity of the defaults with torch.backends (skipped without torch)."""

import importlib.util
import subprocess
import sys
import threading

import pytest

import ember
from ember.backends import _settings


@pytest.fixture(autouse=True)
def restore_settings():
    """Every test starts from the defaults and leaves them behind."""
    _settings.reset()
    yield
    _settings.reset()
    ember.backends._allow_nonbracketed_mutation_flag = True


# --- module layout ------------------------------------------------------------------------


def test_backends_is_reachable_from_import_ember():
    # `import ember` alone must make ember.backends usable (no separate import).
    code = (
        "import ember; ember.backends.cudnn.benchmark = True; "
        "assert ember.backends.cudnn.benchmark is True; "
        "assert ember.backends.mkldnn.is_available(); print('ok')"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "ok"


def test_submodules():
    for name in ("cpu", "cuda", "cudnn", "mha", "mkl", "mkldnn", "mps", "openmp"):
        mod = getattr(ember.backends, name)
        assert mod.__name__ == f"ember.backends.{name}"
        assert sys.modules[f"ember.backends.{name}"] is mod


def test_availability_queries():
    assert ember.backends.mkldnn.is_available() is True
    assert ember.backends.mkldnn.is_acl_available() is False
    assert ember.backends.openmp.is_available() is True
    assert ember.backends.cuda.is_built() is (importlib.util.find_spec("ember._C_cuda") is not None)
    assert ember.backends.cuda.is_flash_attention_available() is False
    assert ember.backends.cudnn.is_available() is False
    assert ember.backends.cudnn.version() is None
    assert ember.backends.cudnn.is_acceptable(ember.ones(2)) is False
    assert ember.backends.mps.is_available() is False
    assert ember.backends.mps.is_built() is False
    assert ember.backends.mkl.is_available() is False


def test_cpu_capability():
    assert ember.backends.cpu.get_cpu_capability() in (
        "DEFAULT",
        "AVX2",
        "AVX512",
        "AVX512_VNNI_BF16",
    )


def test_unknown_attributes_raise():
    with pytest.raises(AttributeError):
        ember.backends.cudnn.no_such_flag  # noqa: B018
    with pytest.raises(AttributeError):
        ember.backends.no_such_module  # noqa: B018
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        ember.backends.cuda.matmul.foo  # noqa: B018
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        ember.backends.cuda.matmul.foo = True


# --- cudnn / mkldnn flags -----------------------------------------------------------------


def test_cudnn_defaults():
    cudnn = ember.backends.cudnn
    assert cudnn.enabled is True
    assert cudnn.benchmark is False
    assert cudnn.deterministic is False
    assert cudnn.allow_tf32 is True
    assert cudnn.benchmark_limit is None


@pytest.mark.parametrize("flag", ["enabled", "benchmark", "deterministic", "allow_tf32"])
def test_cudnn_assignment_reads_back(flag):
    cudnn = ember.backends.cudnn
    old = getattr(cudnn, flag)
    setattr(cudnn, flag, not old)
    assert getattr(cudnn, flag) is (not old)
    # stored in the settings table, not as a module attribute
    assert flag not in vars(cudnn)
    assert _settings.get(f"cudnn.{flag}") is (not old)
    setattr(cudnn, flag, old)
    assert getattr(cudnn, flag) is old


@pytest.mark.parametrize("value", [1, 0, "yes", None, 1.0])
def test_flags_take_bools_only(value):
    with pytest.raises(RuntimeError, match=r"cudnn.benchmark expects a bool"):
        ember.backends.cudnn.benchmark = value
    with pytest.raises(RuntimeError, match=r"mkldnn.enabled expects a bool"):
        ember.backends.mkldnn.enabled = value
    assert ember.backends.cudnn.benchmark is False
    assert ember.backends.mkldnn.enabled is True


def test_mkldnn_flags():
    mkldnn = ember.backends.mkldnn
    assert mkldnn.enabled is True and mkldnn.deterministic is False
    mkldnn.enabled = False
    assert mkldnn.enabled is False
    with mkldnn.flags(enabled=True, deterministic=True):
        assert mkldnn.enabled is True and mkldnn.deterministic is True
    assert mkldnn.enabled is False and mkldnn.deterministic is False
    # PyTorch's defaults: flags() with no arguments turns oneDNN off for the block
    mkldnn.enabled = True
    with mkldnn.flags():
        assert mkldnn.enabled is False
    assert mkldnn.enabled is True


def test_cudnn_flags_context_manager_restores_on_exception():
    cudnn = ember.backends.cudnn
    cudnn.benchmark = True
    with pytest.raises(KeyError):
        with cudnn.flags(enabled=True, benchmark=False, deterministic=True, allow_tf32=False):
            assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32) == (
                True,
                False,
                True,
                False,
            )
            raise KeyError("boom")
    assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32) == (
        True,
        True,
        False,
        True,
    )


def test_cudnn_flags_defaults_turn_cudnn_off():
    with ember.backends.cudnn.flags(deterministic=True):
        assert ember.backends.cudnn.enabled is False
        assert ember.backends.cudnn.deterministic is True
    assert ember.backends.cudnn.enabled is True
    assert ember.backends.cudnn.deterministic is False


def test_set_flags_returns_previous_and_is_all_or_nothing():
    cudnn = ember.backends.cudnn
    orig = cudnn.set_flags(_benchmark=True)
    assert orig == (True, False, None, False, True)
    assert cudnn.benchmark is True
    # one bad value: nothing is changed
    with pytest.raises(RuntimeError):
        cudnn.set_flags(_enabled=False, _deterministic="yes")
    assert cudnn.enabled is True and cudnn.deterministic is False
    cudnn.set_flags(*orig)
    assert cudnn.benchmark is False


def test_nested_flags():
    cudnn = ember.backends.cudnn
    with cudnn.flags(enabled=True, benchmark=True):
        with cudnn.flags(enabled=False, deterministic=True):
            assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic) == (False, False, True)
        assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic) == (True, True, False)
    assert (cudnn.enabled, cudnn.benchmark) == (True, False)


def test_disable_global_flags():
    backends = ember.backends
    assert backends.flags_frozen() is False
    backends.disable_global_flags()
    assert backends.flags_frozen() is True
    with pytest.raises(RuntimeError, match="not allowed to set ember.backends.cudnn flags"):
        backends.cudnn.benchmark = True
    assert backends.cudnn.benchmark is False
    # the context manager still works
    with backends.cudnn.flags(enabled=True, benchmark=True):
        assert backends.cudnn.benchmark is True
    assert backends.cudnn.benchmark is False
    assert backends.flags_frozen() is True


# --- float32 matmul precision and backends.cuda.matmul ------------------------------------


def test_float32_matmul_precision_default_and_values():
    assert ember.get_float32_matmul_precision() == "highest"
    for p in ("high", "medium", "highest"):
        ember.set_float32_matmul_precision(p)
        assert ember.get_float32_matmul_precision() == p


@pytest.mark.parametrize("bad", ["low", "HIGH", "", "fp32", "ieee"])
def test_float32_matmul_precision_rejects_other_strings(bad):
    ember.set_float32_matmul_precision("medium")
    with pytest.raises(ValueError, match="is not one of 'highest', 'high', or 'medium'"):
        ember.set_float32_matmul_precision(bad)
    assert ember.get_float32_matmul_precision() == "medium"


def test_float32_matmul_precision_rejects_non_strings():
    with pytest.raises(TypeError, match="expects a str"):
        ember.set_float32_matmul_precision(1)


def test_allow_tf32_follows_precision():
    matmul = ember.backends.cuda.matmul
    assert matmul.allow_tf32 is False
    ember.set_float32_matmul_precision("high")
    assert matmul.allow_tf32 is True
    ember.set_float32_matmul_precision("medium")
    assert matmul.allow_tf32 is True
    ember.set_float32_matmul_precision("highest")
    assert matmul.allow_tf32 is False


def test_precision_follows_allow_tf32():
    matmul = ember.backends.cuda.matmul
    matmul.allow_tf32 = True
    assert ember.get_float32_matmul_precision() == "high"
    matmul.allow_tf32 = False
    assert ember.get_float32_matmul_precision() == "highest"
    ember.set_float32_matmul_precision("medium")
    matmul.allow_tf32 = True  # as PyTorch's legacy flag: True means "high"
    assert ember.get_float32_matmul_precision() == "high"
    with pytest.raises(RuntimeError, match="allow_tf32 expects a bool"):
        matmul.allow_tf32 = 1
    assert ember.get_float32_matmul_precision() == "high"


def test_reduced_precision_reduction_flags():
    matmul = ember.backends.cuda.matmul
    for kind in ("fp16", "bf16"):
        name = f"allow_{kind}_reduced_precision_reduction"
        assert getattr(matmul, name) is True
        assert getattr(matmul, name + "_split_k") is True
        setattr(matmul, name, False)
        assert getattr(matmul, name) is False
        assert getattr(matmul, name + "_split_k") is True
        setattr(matmul, name, (False, False))
        assert (getattr(matmul, name), getattr(matmul, name + "_split_k")) == (False, False)
        setattr(matmul, name, [True])
        assert (getattr(matmul, name), getattr(matmul, name + "_split_k")) == (True, True)
        with pytest.raises(RuntimeError, match="allow_splitk=False is not supported"):
            setattr(matmul, name, (True, False))
        with pytest.raises(TypeError, match="expects a bool or a tuple/list of bools"):
            setattr(matmul, name, 1)
        with pytest.raises(TypeError, match="at most two"):
            setattr(matmul, name, (True, True, True))
        with pytest.raises(TypeError, match="at least one"):
            setattr(matmul, name, ())
        assert getattr(matmul, name) is True
    assert matmul.allow_fp16_accumulation is False
    matmul.allow_fp16_accumulation = True
    assert matmul.allow_fp16_accumulation is True


def test_preferred_linalg_library():
    cuda = ember.backends.cuda
    assert cuda.preferred_linalg_library() is cuda._LinalgBackend.Default
    assert repr(cuda.preferred_linalg_library()) == "<_LinalgBackend.Default: 0>"
    assert str(cuda.preferred_linalg_library()) == "_LinalgBackend.Default"
    assert cuda.preferred_linalg_library("cusolver") is cuda._LinalgBackend.Cusolver
    assert cuda.preferred_linalg_library() is cuda._LinalgBackend.Cusolver
    assert cuda.preferred_linalg_library(cuda._LinalgBackend.Magma) is cuda._LinalgBackend.Magma
    with pytest.raises(RuntimeError, match="Choose from: default, cusolver, magma"):
        cuda.preferred_linalg_library("lapack")
    with pytest.raises(RuntimeError, match="Unknown input value type"):
        cuda.preferred_linalg_library(1)
    assert _settings.get("cuda.preferred_linalg_library") == "magma"


SDP = ("flash", "mem_efficient", "math", "cudnn")


@pytest.mark.parametrize("kind", SDP)
def test_sdp_flags(kind):
    cuda = ember.backends.cuda
    enabled = getattr(cuda, f"{kind}_sdp_enabled")
    enable = getattr(cuda, f"enable_{kind}_sdp")
    assert enabled() is True
    enable(False)
    assert enabled() is False
    enable(True)
    assert enabled() is True
    with pytest.raises(RuntimeError, match="expects a bool"):
        enable("no")


def test_sdp_kernel_context_manager():
    cuda = ember.backends.cuda
    cuda.enable_cudnn_sdp(False)
    with cuda.sdp_kernel(enable_flash=False, enable_mem_efficient=False):
        assert [getattr(cuda, f"{k}_sdp_enabled")() for k in SDP] == [False, False, True, True]
    assert [getattr(cuda, f"{k}_sdp_enabled")() for k in SDP] == [True, True, True, False]


def test_fp16_bf16_reduction_math_sdp():
    cuda = ember.backends.cuda
    assert cuda.fp16_bf16_reduction_math_sdp_allowed() is False
    cuda.allow_fp16_bf16_reduction_math_sdp(True)
    assert cuda.fp16_bf16_reduction_math_sdp_allowed() is True


# --- mha ----------------------------------------------------------------------------------


def test_mha_fastpath_setting():
    mha = ember.backends.mha
    assert mha.get_fastpath_enabled() is True
    mha.set_fastpath_enabled(False)
    assert mha.get_fastpath_enabled() is False
    # the value future code reads
    assert _settings.get("mha.fastpath_enabled") is False
    mha.set_fastpath_enabled(True)
    assert mha.get_fastpath_enabled() is True


# --- the settings table -------------------------------------------------------------------


def test_settings_table_api():
    snap = _settings.snapshot()
    assert snap["cudnn.benchmark"] is False and snap["float32_matmul_precision"] == "highest"
    assert _settings.set("cudnn.benchmark", True) is False
    assert _settings.update({"cudnn.benchmark": False, "mkldnn.enabled": False}) == {
        "cudnn.benchmark": True,
        "mkldnn.enabled": True,
    }
    with pytest.raises(KeyError, match="unknown setting"):
        _settings.get("cudnn.nope")
    with pytest.raises(KeyError, match="unknown setting"):
        _settings.set("cudnn.nope", True)
    _settings.reset()
    assert _settings.snapshot() == snap


def test_settings_are_global_across_threads():
    # Like PyTorch's at::Context flags, a value set in one thread is seen in every other.
    seen = []
    ember.backends.cudnn.benchmark = True
    t = threading.Thread(target=lambda: seen.append(ember.backends.cudnn.benchmark))
    t.start()
    t.join()
    assert seen == [True]


def test_compound_updates_are_atomic():
    # Writers always set the two flags to equal values with one set_flags call; a reader taking
    # snapshots must never see them differ.
    stop = threading.Event()
    torn = []

    def writer(value):
        while not stop.is_set():
            ember.backends.cudnn.set_flags(_benchmark=value, _deterministic=value)

    def reader():
        for _ in range(20000):
            snap = _settings.snapshot()
            if snap["cudnn.benchmark"] is not snap["cudnn.deterministic"]:
                torn.append(snap)
        stop.set()

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=writer, args=(v,)) for v in (True, False)]
        threads.append(threading.Thread(target=reader))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert torn == []


def test_concurrent_precision_changes_stay_valid():
    values = ("highest", "high", "medium")
    errors = []

    def worker(i):
        try:
            for j in range(2000):
                ember.set_float32_matmul_precision(values[(i + j) % 3])
                p = ember.get_float32_matmul_precision()
                assert p in values
                assert ember.backends.cuda.matmul.allow_tf32 in (True, False)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert ember.get_float32_matmul_precision() in values


# --- parity with torch.backends -----------------------------------------------------------


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def test_defaults_match_torch(torch):
    tb, eb = torch.backends, ember.backends
    for flag in ("enabled", "benchmark", "deterministic", "allow_tf32"):
        assert getattr(eb.cudnn, flag) == getattr(tb.cudnn, flag), flag
    assert eb.mkldnn.enabled == tb.mkldnn.enabled
    assert eb.mkldnn.deterministic == tb.mkldnn.deterministic
    assert eb.mkldnn.is_available() == tb.mkldnn.is_available()
    assert eb.openmp.is_available() == tb.openmp.is_available()
    assert eb.mha.get_fastpath_enabled() == tb.mha.get_fastpath_enabled()
    for name in (
        "allow_tf32",
        "allow_fp16_reduced_precision_reduction",
        "allow_bf16_reduced_precision_reduction",
        "allow_fp16_reduced_precision_reduction_split_k",
        "allow_bf16_reduced_precision_reduction_split_k",
        "allow_fp16_accumulation",
    ):
        assert getattr(eb.cuda.matmul, name) == getattr(tb.cuda.matmul, name), name
    for kind in SDP:
        assert (
            getattr(eb.cuda, f"{kind}_sdp_enabled")() == getattr(tb.cuda, f"{kind}_sdp_enabled")()
        )
    assert (
        eb.cuda.fp16_bf16_reduction_math_sdp_allowed()
        == tb.cuda.fp16_bf16_reduction_math_sdp_allowed()
    )
    assert ember.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
    assert repr(eb.cuda.preferred_linalg_library()) == repr(tb.cuda.preferred_linalg_library())


@pytest.mark.filterwarnings("ignore:TF32 acceleration on top of oneDNN")
def test_flags_context_defaults_match_torch(torch):
    names = ("enabled", "benchmark", "deterministic", "allow_tf32")
    with torch.backends.cudnn.flags(), ember.backends.cudnn.flags():
        assert [getattr(ember.backends.cudnn, n) for n in names] == [
            getattr(torch.backends.cudnn, n) for n in names
        ]
    with torch.backends.mkldnn.flags(), ember.backends.mkldnn.flags():
        assert ember.backends.mkldnn.enabled == torch.backends.mkldnn.enabled
        assert ember.backends.mkldnn.deterministic == torch.backends.mkldnn.deterministic


def test_precision_to_allow_tf32_matches_torch(torch):
    orig = torch.get_float32_matmul_precision()
    try:
        for p in ("high", "medium", "highest"):
            torch.set_float32_matmul_precision(p)
            ember.set_float32_matmul_precision(p)
            assert ember.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
            assert ember.backends.cuda.matmul.allow_tf32 == torch.backends.cuda.matmul.allow_tf32
    finally:
        torch.set_float32_matmul_precision(orig)
