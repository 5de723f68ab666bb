"""Note [No Python objects in statics] (docs/design/build.md): a pybind11 object held in a
static or namespace-scope variable of the extension modules is released by a C++ exit handler,
after the interpreter has finalized. Python 3.12 and later crash there (their object allocator's
state belongs to the interpreter): `import ember` died with SIGSEGV at exit on 3.12 until the
dtype objects became leaked handles. These tests keep such variables out of csrc/bindings and
check that the process exits cleanly."""

import re
import subprocess
import sys
from pathlib import Path

BINDINGS = Path(__file__).resolve().parents[2] / "csrc" / "bindings"
# py::object and its subclasses that own a reference (py::handle does not).
OWNING = ("object|class_|module_|dict|list|tuple|str|capsule|function|array|array_t<[^>]*>|"
          "bytes|int_|float_|exception<[^>]*>|set|iterable|sequence")
# `static py::object x...` anywhere, or `py::object x;` / `x[N];` / `x = ...` at namespace scope
# (column 0, no parenthesis: not a function).
STATIC = re.compile(rf"^\s*static\s+(const\s+)?py::({OWNING})\b[^(]*(;|=|\{{|\()")
NAMESPACE_SCOPE = re.compile(rf"^(const\s+)?py::({OWNING})\s+\w+(\[[^\]]*\])?\s*(;|=|\{{)")


def test_no_owning_python_objects_in_statics():
    found = []
    for path in sorted(BINDINGS.rglob("*.[ch]*")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if STATIC.match(line) or NAMESPACE_SCOPE.match(line):
                found.append(f"{path.relative_to(BINDINGS)}:{number}: {line.strip()}")
    assert not found, "hold a leaked py::handle instead (.release()):\n" + "\n".join(found)


def test_the_interpreter_exits_cleanly_after_using_ember():
    script = ("import ember, ember.nn, ember.distributed, ember.cuda\n"
              "x = ember.ones(3, dtype=ember.float16) + 1\n"
              "ember.cuda.is_available(); print(x.dtype, ember.float32)\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])
    assert result.stdout.split() == ["ember.float16", "ember.float32"]
