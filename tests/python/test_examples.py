"""The examples run and print what they promise (the README's quick start runs examples/tour.py)."""

import runpy
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_tour_runs(capsys):
    runpy.run_path(str(EXAMPLES / "tour.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "from_numpy shares memory: True" in out
    assert "numpy() shares memory: True" in out
    assert "after a[1][0] = 40: [[1.0, 2.0, 3.0], [40.0, 5.0, 6.0]]" in out
    assert "Use .reshape(...) instead." in out
    assert "tensor([], size=(0, 3))" in out
