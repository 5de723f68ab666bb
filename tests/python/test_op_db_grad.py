"""Gradients of every op in the op database (Note [Gradcheck Entries] in opinfo.py)."""

import importlib
import pathlib

import pytest

import ember
from opinfo import run_gradcheck, run_no_grad_check

_here = pathlib.Path(__file__).parent
OP_DB = []
for path in sorted(_here.glob("opdb_*.py")):
    OP_DB.extend(importlib.import_module(path.stem).OP_DB)


def _has_float_dtypes(op):
    return any(d.is_floating_point or d.is_complex for d in op.dtypes)


DIFF = [op for op in OP_DB if op.differentiable]
GRAD_CASES = [pytest.param(op, ember.float64, id=f"{op.name}-float64") for op in DIFF]
GRAD_CASES += [
    pytest.param(op, ember.complex128, id=f"{op.name}-complex128") for op in DIFF if op.grad_complex
]
GRADGRAD_CASES = [pytest.param(op, id=op.name) for op in DIFF if op.gradgrad]
NONDIFF = [
    pytest.param(op, id=op.name)
    for op in OP_DB
    if op.differentiable is False and ember.float64 in op.dtypes
]


@pytest.mark.parametrize("op,dtype", GRAD_CASES)
def test_gradcheck(op, dtype):
    run_gradcheck(op, dtype)


# Forward AD that raises a clear error, as reverse mode does for the same input: scatter's
# multiply over complex src goes through scatter_reduce, whose derivative refuses complex
# outputs (as PyTorch's).
FORWARD_AD_REFUSED = {("scatter_reduce_multiply", ember.complex128): "complex dtype"}


@pytest.mark.parametrize("op,dtype", GRAD_CASES)
def test_forward_ad_gradcheck(op, dtype):
    """Every differentiable op has a forward derivative: its forward-mode Jacobian matches
    finite differences."""
    refused = FORWARD_AD_REFUSED.get((op.name, dtype))
    if refused is not None:
        with pytest.raises(NotImplementedError, match=refused):
            run_gradcheck(op, dtype, forward=True)
        return
    run_gradcheck(op, dtype, forward=True)


@pytest.mark.parametrize("op", GRADGRAD_CASES)
def test_gradgradcheck(op):
    run_gradcheck(op, ember.float64, gradgrad=True)


@pytest.mark.parametrize("op", NONDIFF)
def test_non_differentiable_ops_record_nothing(op):
    run_no_grad_check(op, ember.float64)


def test_every_op_declares_differentiability():
    undeclared = sorted(
        op.name for op in OP_DB if _has_float_dtypes(op) and op.differentiable is None
    )
    assert not undeclared, f"OpInfos without differentiable=True/False: {undeclared}"
