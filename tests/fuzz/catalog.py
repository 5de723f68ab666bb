"""What there is to call: ember's public API (by introspection, with parameter lists parsed from
signatures), and valid seed calls harvested from the op database (tests/python/opdb_*.py).

The catalog is built inside a child process (it imports ember and runs the op database's sample
generators); the parent only ever sees plain data.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import sys

from . import exclusions
from .spec import DTYPES, build_call, enc_elem

NAMESPACES = ("ember", "ember.nn.functional", "ember.linalg", "ember.special", "ember.fft")
HERE = os.path.dirname(os.path.abspath(__file__))
OPDB_DIR = os.path.join(os.path.dirname(HERE), "python")
SIGNATURES_FILE = os.path.join(HERE, "signatures.json")

SEEDS_PER_DTYPE = 3


# ------------------------------------------------------------------------------------------
# signatures
# ------------------------------------------------------------------------------------------


def _split_top(s: str):
    """Splits s at commas outside brackets and quotes."""
    out, depth, cur, quote = [], 0, [], ""
    for ch in s:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = ""
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def parse_params(text: str, drop_self: bool):
    """Parameters of a signature's parameter text as dicts {n: name, k: p|k|v, t: type, d:
    default text or None}."""
    params, kwonly = [], False
    for tok in _split_top(text):
        if tok == "*":
            kwonly = True
            continue
        if tok == "/" or tok.startswith("**"):
            continue
        default = None
        if "=" in tok:
            tok, default = (x.strip() for x in tok.split("=", 1))
        typ = ""
        if ":" in tok:
            tok, typ = (x.strip() for x in tok.split(":", 1))
        if tok.startswith("*"):
            params.append({"n": tok[1:], "k": "v", "t": typ, "d": None})
            kwonly = True
            continue
        params.append({"n": tok, "k": "k" if kwonly else "p", "t": typ, "d": default})
    if drop_self and params and params[0]["n"] == "self":
        params = params[1:]
    return params


def doc_signatures(name: str, doc: str, drop_self: bool):
    """Overloads listed in a docstring's signature lines ("name(a, b=1) -> T")."""
    pat = re.compile(r"^\s*(?:\d+\.\s*)?(?:[\w.]+\.)?" + re.escape(name) + r"\((.*)\)\s*(->.*)?$")
    out = []
    for line in (doc or "").splitlines()[:80]:
        m = pat.match(line)
        if m and m.group(1) != "*args, **kwargs":
            out.append(parse_params(m.group(1), drop_self))
    return out


def signatures_of(obj, name: str, drop_self: bool):
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return doc_signatures(name, getattr(obj, "__doc__", "") or "", drop_self)
    params, seen_self = [], False
    for p in sig.parameters.values():
        if drop_self and not seen_self and p.name == "self":
            seen_self = True
            continue
        kind = {
            p.VAR_POSITIONAL: "v",
            p.KEYWORD_ONLY: "k",
        }.get(p.kind, "p")
        if p.kind == p.VAR_KEYWORD:
            continue
        default = None if p.default is p.empty else repr(p.default)
        ann = "" if p.annotation is p.empty else str(p.annotation)
        params.append({"n": p.name, "k": kind, "t": ann, "d": default})
    return [params]


# ------------------------------------------------------------------------------------------
# the public API
# ------------------------------------------------------------------------------------------


def api_entries(ember):
    """[{path, kind: fn|method|attr|module, sigs: [[param...]]}] for everything fuzzable."""
    out = []
    for ns in NAMESPACES:
        try:
            mod = importlib.import_module(ns)
        except ImportError:
            continue
        for name in sorted(dir(mod)):
            path = f"{ns}.{name}"
            if name.startswith("_") or exclusions.excluded(path):
                continue
            obj = getattr(mod, name)
            if inspect.ismodule(obj) or inspect.isclass(obj) or not callable(obj):
                continue
            out.append({"path": path, "kind": "fn", "sigs": signatures_of(obj, name, False)})
    for name in sorted(dir(ember.Tensor)):
        path = f"Tensor.{name}"
        if name.startswith("_") and name not in exclusions.TENSOR_DUNDERS:
            continue
        if exclusions.excluded(path):
            continue
        raw = inspect.getattr_static(ember.Tensor, name, None)
        if isinstance(raw, property) or type(raw).__name__ == "getset_descriptor":
            out.append({"path": path, "kind": "attr", "sigs": [[]]})
            continue
        obj = getattr(ember.Tensor, name)
        if not callable(obj):
            continue
        out.append({"path": path, "kind": "method", "sigs": signatures_of(obj, name, True)})
    nn = importlib.import_module("ember.nn")
    for name in sorted(dir(nn)):
        obj = getattr(nn, name)
        if not inspect.isclass(obj) or name.startswith("_") or name in exclusions.EXCLUDED_MODULES:
            continue
        if not issubclass(obj, nn.Module):
            continue
        path = f"ember.nn.{name}"
        if exclusions.excluded(path):
            continue
        out.append({"path": path, "kind": "module", "sigs": signatures_of(obj, name, True)})
    return out


def torch_missing(torch, paths):
    """The paths torch has no counterpart for (no oracle for those)."""
    from .spec import resolve

    missing = []
    for p in paths:
        try:
            if p.startswith("Tensor."):
                getattr(torch.Tensor, p[7:])
            else:
                resolve(p, torch)
        except (AttributeError, ImportError):
            missing.append(p)
    return missing


# ------------------------------------------------------------------------------------------
# seeds from the op database
# ------------------------------------------------------------------------------------------


def value_spec(x, ember, depth=0):
    """The spec of a sample argument (ValueError for what specs cannot express)."""
    if isinstance(x, ember.Tensor):
        t = x.detach()
        flat = t.reshape(-1).tolist() if t.dim() else [t.item()]
        if t.is_contiguous():
            layout = "C"
        elif t.dim() >= 2 and t.transpose(-1, -2).is_contiguous():
            layout = "T"
        elif t.dim() and 0 in t.stride() and t.shape[0] > 1 and 0 == t.stride()[0]:
            layout = "X"
        else:
            layout = "S"
        spec = {"d": str(t.dtype).rsplit(".", 1)[-1], "s": list(t.shape), "l": layout}
        spec["v"] = [enc_elem(v) for v in flat]
        return {"tensor": spec}
    if x is None or isinstance(x, (bool, int, str)):
        return x
    if isinstance(x, float):
        from .spec import enc_float

        return enc_float(x)
    if isinstance(x, complex):
        return {"c": [value_spec(x.real, ember), value_spec(x.imag, ember)]}
    if isinstance(x, (list, tuple)) and depth < 4:
        kind = "tuple" if isinstance(x, tuple) else "list"
        return {kind: [value_spec(e, ember, depth + 1) for e in x]}
    if isinstance(x, ember.dtype):
        return {"dtype": str(x).rsplit(".", 1)[-1]}
    if x is Ellipsis:
        return {"ellipsis": 0}
    if isinstance(x, slice):
        return {"slice": [value_spec(e, ember) for e in (x.start, x.stop, x.step)]}
    raise ValueError(f"no spec for {type(x).__name__}")


def _candidates(op, by_id, api_paths):
    """Paths the OpInfo's ember_fn may stand for, best first."""
    fn = op.ember_fn
    if fn is None:
        return [f"ember.{op.name}"]
    hit = by_id.get(id(fn))
    if hit:
        return [hit]
    names = [op.name]
    parts = op.name.split("_")
    names += ["_".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]
    out = []
    for n in names:
        for ns in ("ember", "ember.linalg", "ember.nn.functional", "Tensor"):
            p = f"{ns}.{n}"
            if p in api_paths and p not in out:
                out.append(p)
    return out


def seeds_for(op, ember, by_id, api_paths):
    """Valid calls (specs that ember accepts) from one OpInfo's samples."""
    import numpy as np

    out, path = [], None
    for dtype in op.dtypes:
        dname = str(dtype).rsplit(".", 1)[-1]
        if dname not in DTYPES:
            continue
        rng = np.random.default_rng(0)
        try:
            samples = op.sample(dtype, rng)
        except Exception:  # noqa: BLE001  (a broken sample generator is not ours to report)
            continue
        step = max(1, len(samples) // SEEDS_PER_DTYPE)
        for s in samples[::step][:SEEDS_PER_DTYPE]:
            try:
                args = [value_spec(a, ember) for a in s.args]
                kwargs = {k: value_spec(v, ember) for k, v in s.kwargs.items()}
            except ValueError:
                continue
            tries = [path] if path else _candidates(op, by_id, api_paths)
            for p in tries:
                call = {"fn": p, "args": args, "kwargs": kwargs}
                try:
                    thunk, _, _ = build_call(call, ember)
                    thunk()
                except Exception:  # noqa: BLE001
                    continue
                path = p
                out.append(dict(call, op=op.name, dtype=dname))
                break
    return out


def load_opdb():
    if OPDB_DIR not in sys.path:
        sys.path.insert(0, OPDB_DIR)
    ops = []
    for fname in sorted(os.listdir(OPDB_DIR)):
        if fname.startswith("opdb_") and fname.endswith(".py"):
            try:
                ops.extend(importlib.import_module(fname[:-3]).OP_DB)
            except Exception as e:  # noqa: BLE001
                print(f"fuzz: cannot import {fname}: {e}", file=sys.stderr)
    return ops


def load_signatures():
    """Parameter lists recorded from PyTorch (see --dump-signatures), by ember path."""
    try:
        with open(SIGNATURES_FILE) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def torch_signatures(torch, paths):
    """Parameter lists of the torch counterparts of paths, from torch's docstrings."""
    from .spec import resolve

    out = {}
    for p in paths:
        name = p.rsplit(".", 1)[-1]
        try:
            if p.startswith("Tensor."):
                obj = getattr(torch.Tensor, name)
                sigs = doc_signatures(name, obj.__doc__ or "", True)
            else:
                obj = resolve(p, torch)
                sigs = signatures_of(obj, name, inspect.isclass(obj))
        except (AttributeError, ImportError):
            continue
        sigs = [s for s in sigs if s is not None]
        if sigs:
            out[p] = [[[q["n"], q["k"], q["d"]] for q in s] for s in sigs]
    return out


def catalog_main(conn, opts, errlog, skip):
    """Child entry point: sends ("API", entries), ("MISSING", paths), then per OpInfo a progress
    marker and ("SEEDS", seeds), then ("END",). Ops in skip (they crashed before) are left out."""
    from .worker import setup_child

    libs = setup_child(errlog, dict(opts, threads=opts.get("threads")))
    ember = libs[0]
    api = api_entries(ember)
    conn.send(("API", api))
    if len(libs) > 1:
        conn.send(("MISSING", torch_missing(libs[1], [e["path"] for e in api])))
    api_paths = {e["path"] for e in api}
    by_id = {}
    for e in api:
        if e["kind"] == "fn":
            try:
                from .spec import resolve

                by_id.setdefault(id(resolve(e["path"], ember)), e["path"])
            except (AttributeError, ImportError):
                pass
    for op in load_opdb():
        if op.name in skip:
            continue
        conn.send_bytes(b"P" + op.name.encode())
        conn.send(("SEEDS", seeds_for(op, ember, by_id, api_paths)))
    conn.send(("END",))
    conn.close()
    os._exit(0)
