"""Runs every OpInfo of every family database (opdb_*.py) over its dtypes."""

import importlib
import pathlib

import pytest

from opinfo import run_op

_here = pathlib.Path(__file__).parent
OP_DB = []
for path in sorted(_here.glob("opdb_*.py")):
    OP_DB.extend(importlib.import_module(path.stem).OP_DB)

CASES = [pytest.param(op, dt, id=f"{op.name}-{str(dt)[6:]}") for op in OP_DB for dt in op.dtypes]


@pytest.mark.parametrize("op,dtype", CASES)
def test_op_against_numpy(op, dtype):
    run_op(op, dtype)


def test_op_names_unique():
    names = [op.name for op in OP_DB]
    dupes = {n for n in names if names.count(n) > 1}
    assert not dupes, f"duplicate OpInfo names: {sorted(dupes)}"
