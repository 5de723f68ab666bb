#!/usr/bin/env python3
"""Fails when a comment or design note cites something that is not in the repository.

Two kinds of citation are checked, in C++ and Python sources, CMake files and Markdown docs:

* ``Note [Title]``: every title cited must be defined somewhere, by a comment or a line that
  starts with it (``// Note [Title]``, ``# Note [Title]``, ``## Note [Title]`` in a doc).
* file paths such as ``ops/unary.cpp`` or ``docs/design/autograd.md``: each must name an
  existing file (globs like ``kernels/cpu/unary_*.cpp`` must match one). A path is looked up
  from the repository root, from ``csrc/`` and from the citing file's own folder.

Usage: ``python scripts/check_references.py`` (exit status 1 and one line per dangling
reference when there is one). CI runs it with the lint step.
"""

from __future__ import annotations

import glob
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE_DIRS = ["csrc", "python", "tests", "benchmarks", "scripts", "examples", "docs", ".ci"]
TOP_FILES = ["README.md", "CONTRIBUTING.md", "CMakeLists.txt", "pyproject.toml"]
SUFFIXES = {".h", ".cpp", ".cu", ".cuh", ".py", ".md", ".txt", ".cmake", ".def", ".sh", ".toml"}

NOTE = re.compile(r"Note \[([^\]]+)\]")
NOTE_DEFINITION = re.compile(r"^\s*(?://+|#+|\*|-)?\s*Note \[([^\]]+)\]")
# A path: at least one folder, a file name with a known extension; * allowed for globs.
PATH = re.compile(
    r"(?<![\w./-])((?:[\w*.-]+/)+[\w*.-]*\.(?:h|cpp|cu|cuh|py|md|def|yaml|sh|toml|txt|cmake))\b"
)
# Folders that only exist outside this repository or on other machines.
EXTERNAL_PREFIXES = (
    "torch/", "aten/", "ATen/", "c10/", "/usr/", "/proc/", "/sys/", "http", "site-packages/",
    "lib/cmake/",  # inside an installed package's prefix
)
# Files outside the repository that a comment must not cite (the repository has its own copy).
FORBIDDEN = ("ARCHITECTURE.md", "STYLE.md")


def source_files() -> list[Path]:
    files = [ROOT / f for f in TOP_FILES if (ROOT / f).exists()]
    for d in SOURCE_DIRS:
        base = ROOT / d
        if not base.exists():
            continue
        for p in base.rglob("*"):
            if p.is_file() and (p.suffix in SUFFIXES or p.name == "run"):
                if "results" in p.parts or "__pycache__" in p.parts:
                    continue
                files.append(p)
    return sorted(files)


def comment_text(path: Path, line: str) -> str | None:
    """The part of a line that is prose: a comment in code, the whole line in docs."""
    if path.suffix in {".md", ".txt"}:
        return line
    if path.suffix in {".py", ".sh", ".toml", ".cmake"} or path.name in {"run", "CMakeLists.txt"}:
        i = line.find("#")
        return line[i:] if i >= 0 else None
    i = line.find("//")
    if i >= 0:
        return line[i:]
    stripped = line.lstrip()
    return stripped if stripped.startswith("*") or stripped.startswith("/*") else None


def path_exists(cited: str, citing: Path, repo_files: list[str]) -> bool:
    """Found from the root, csrc/ or the citing folder, or as the tail of a repository path
    (docs cite ``nn/init.py`` for ``python/ember/nn/init.py``)."""
    cited = re.sub(r"\.(h|py)/\.\w+$", r".\1", cited.rstrip("."))  # "engine.h/.cpp"
    for base in (ROOT, ROOT / "csrc", citing.parent, citing.parent.parent):
        candidate = base / cited
        if glob.glob(str(candidate)) if "*" in cited else candidate.exists():
            return True
    pattern = re.compile("(^|/)" + re.escape(cited).replace(r"\*", "[^/]*") + "$")
    return any(pattern.search(f) for f in repo_files)


def main() -> int:
    defined: set[str] = set()
    cited: list[tuple[Path, int, str]] = []
    dangling: list[str] = []
    files = source_files()
    repo_files = [str(f.relative_to(ROOT)) for f in files]
    for path in files:
        if path.resolve() == Path(__file__).resolve():
            continue
        in_docstring = False
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if path.suffix == ".py" and line.count('"""') % 2 == 1:
                in_docstring = not in_docstring
            text = line if in_docstring else comment_text(path, line)
            if text is None:
                continue
            m = NOTE_DEFINITION.match(text.lstrip("/#* ") and text)
            if m:
                defined.add(m.group(1))
            for note in NOTE.findall(text):
                cited.append((path, number, note))
            for name in FORBIDDEN:
                if re.search(rf"(?<![\w/]){re.escape(name)}", text) and not (ROOT / name).exists():
                    dangling.append(f"{path.relative_to(ROOT)}:{number}: cites {name}, not in repo")
            for p in PATH.findall(text):
                in_url = "://" in text and p in text.split("://", 1)[1]
                if p.startswith(EXTERNAL_PREFIXES) or in_url:
                    continue
                if not path_exists(p, path, repo_files):
                    dangling.append(f"{path.relative_to(ROOT)}:{number}: path {p} does not exist")
    for path, number, note in cited:
        if note not in defined:
            dangling.append(f"{path.relative_to(ROOT)}:{number}: Note [{note}] is never defined")
    for line in dangling:
        print(line)
    if dangling:
        print(f"{len(dangling)} dangling reference(s)", file=sys.stderr)
        return 1
    print(f"references: {len(cited)} note citations, {len(defined)} notes defined, all resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
