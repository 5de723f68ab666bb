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


def test_train_digits_reaches_97_percent_and_survives_save_load(capsys):
    # The README's first command: a CNN on scikit-learn's digits, >= 97% test accuracy, and the
    # same accuracy after ember.save / ember.load.
    demo = runpy.run_path(str(EXAMPLES / "train_digits.py"), run_name="train_digits")
    test_accuracy, restored_accuracy = demo["main"](["--no-progress"])
    out = capsys.readouterr().out
    assert test_accuracy >= 0.97
    assert restored_accuracy == test_accuracy
    assert "test accuracy:" in out and "training time:" in out and "(same)" in out
