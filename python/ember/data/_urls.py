"""Shard URL lists: brace expansion as WebDataset (and the ``braceexpand`` package) does it.

``train-{000000..001281}.tar`` expands to 1282 names with the zero padding of the bounds;
``{a,b,c}`` to alternatives; several groups multiply out, and groups nest. ``::`` joins
several URL patterns in one string, and ``${NAME}`` is replaced by the environment variable
``WDS_NAME`` (or ``NAME``). A list or tuple of patterns expands each in turn.
"""

from __future__ import annotations

import os
import re

__all__ = ["expand_urls", "braceexpand"]

_RANGE = re.compile(r"^(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?$")
_ALPHA_RANGE = re.compile(r"^([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?\d+))?$")


def _matching_brace(pattern: str, start: int) -> int:
    depth = 0
    i = start
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _split_top_level(body: str) -> list[str]:
    parts, depth, current, i = [], 0, [], 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            current.append(body[i:i + 2])
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(c)
        i += 1
    parts.append("".join(current))
    return parts


def _padded(bound: str) -> bool:
    digits = bound.lstrip("-")
    return len(digits) > 1 and digits.startswith("0")


def _range_items(body: str) -> list[str] | None:
    m = _RANGE.match(body)
    if m:
        lo, hi = m.group(1), m.group(2)
        step = abs(int(m.group(3) or 1)) or 1
        a, b = int(lo), int(hi)
        width = max(len(lo), len(hi)) if _padded(lo) or _padded(hi) else 0
        values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [f"{v:0{width}d}" if width else str(v) for v in values]
    m = _ALPHA_RANGE.match(body)
    if m:
        a, b = ord(m.group(1)), ord(m.group(2))
        step = abs(int(m.group(3) or 1)) or 1
        values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [chr(v) for v in values]
    return None


def braceexpand(pattern: str) -> list[str]:
    """All strings the brace pattern stands for, in order (bash's rules, as ``braceexpand``)."""
    i = 0
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern[i] == "{":
            end = _matching_brace(pattern, i)
            if end < 0:
                break  # an unmatched brace is literal
            body = pattern[i + 1:end]
            items = _range_items(body)
            if items is None:
                parts = _split_top_level(body)
                if len(parts) < 2:  # "{x}" is literal, but its inside may still expand
                    items = ["{" + p + "}" for p in braceexpand(body)]
                else:
                    items = [x for p in parts for x in braceexpand(p)]
            head, tails = pattern[:i], braceexpand(pattern[end + 1:])
            return [head + item + tail for item in items for tail in tails]
        i += 1
    return [re.sub(r"\\(.)", r"\1", pattern)]


def envsubst(text: str) -> str:
    """``${NAME}`` replaced by the environment variable ``WDS_NAME`` (WebDataset's rule), or
    ``NAME`` when that one is not set."""

    def lookup(m):
        name = m.group(1)
        for key in ("WDS_" + name, name):
            if key in os.environ:
                return os.environ[key]
        raise ValueError(f"shard URL uses ${{{name}}} but neither WDS_{name} nor {name} is set "
                         "in the environment")

    return re.sub(r"\$\{(\w+)\}", lookup, text)


def expand_urls(urls) -> list[str]:
    """A flat list of shard URLs from a pattern string (``::``-separated patterns allowed), a
    path-like, or a list/tuple of them."""
    if isinstance(urls, os.PathLike):
        urls = os.fspath(urls)
    if isinstance(urls, str):
        out = []
        for part in envsubst(urls).split("::"):
            out.extend(braceexpand(part))
        return out
    if isinstance(urls, (list, tuple)):
        out = []
        for u in urls:
            out.extend(expand_urls(u))
        return out
    raise TypeError("shard urls must be a string, a path or a list of them, got "
                    f"{type(urls).__name__}")
