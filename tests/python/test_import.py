"""`import ember` itself: the submodules that load on first use (ember/__init__.py's
_LAZY_SUBMODULES) stay out of the import and appear, fully working, on first use."""

import subprocess
import sys

import pytest

import ember

LAZY = ["distributions", "hub", "onnx"]


def run_fresh(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    )
    return result.stdout.strip()


def test_lazy_submodules_are_not_imported_by_import_ember():
    out = run_fresh(
        "import sys, ember; print(sorted(m for m in sys.modules if m in "
        f"{[f'ember.{name}' for name in LAZY]!r}))"
    )
    assert out == "[]"


@pytest.mark.parametrize("name", LAZY)
def test_lazy_submodule_loads_on_attribute_access(name):
    out = run_fresh(f"import ember; m = ember.{name}; print(m.__name__, '{name}' in dir(ember))")
    assert out == f"ember.{name} True"


def test_lazy_submodules_work_through_every_import_form():
    out = run_fresh(
        "from ember.distributions import Normal\n"
        "import ember.onnx\n"
        "from ember import hub\n"
        "import ember\n"
        "print(Normal(0.0, 1.0).log_prob(ember.tensor(0.0)).item() < 0, "
        "ember.onnx.is_in_onnx_export(), callable(hub.load_state_dict_from_url))"
    )
    assert out == "True False True"


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="module 'ember' has no attribute 'no_such_thing'"):
        ember.no_such_thing  # noqa: B018
    assert not hasattr(ember, "no_such_thing")


def test_transformer_fastpath_does_not_import_onnx():
    out = run_fresh(
        "import sys, ember\n"
        "layer = ember.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True).eval()\n"
        "x = ember.randn(2, 3, 8)\n"
        "with ember.no_grad():\n"
        "    layer(x)\n"
        "    runs = ember.nn.why_not_fastpath(layer, x) == ''\n"
        "print(runs, 'ember.onnx' in sys.modules)"
    )
    assert out == "True False"
