#!/usr/bin/env python3
"""Checks that libember runs on a CPU of the baseline level (x86-64-v2) whatever its kernels do.

Two ways a kernel file compiled for a higher level could leak its instructions into code that
runs on every CPU (docs/design/cpu-dispatch.md, "What keeps the baseline safe"):

1. A static initialiser in a level's object file runs at import on every CPU. Registration is
   constant data (dispatch/stub.h), so no level object may have an .init_array section.
2. An inline function from a shared header, emitted by several levels, of which the linker keeps
   one copy: scripts/merge_level_objects.py gives each level's copies a level suffix. Baseline
   code has no VEX or EVEX instruction at all, so any global function using one (a mnemonic
   starting with "v", or a ymm / zmm / opmask register) must carry a level's name (namespace
   cpu_avx2, cpu_avx512, ..., or the suffix), which only the dispatcher reaches, after checking
   the CPU. Local functions (compiler clones such as .constprop, .cold) are exempt: they are
   private to the object that made them, and only a level's object can contain AVX code.

    python scripts/check_isa_leaks.py build            # the build tree of a baseline build
"""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

LEVEL_NAMESPACE = re.compile(r"cpu_avx[a-z0-9_]*")  # demangled, or mangled (.cold clones)
FUNCTION_HEADER = re.compile(r"^([0-9a-f]+) <(.+)>:$")
AVX_REGISTER = re.compile(r"%(ymm|zmm)\d+|%k[1-7]\b")


def level_objects(build: pathlib.Path) -> list[pathlib.Path]:
    return sorted(build.glob("CMakeFiles/ember_cpu_*.dir/**/*.o")) + sorted(
        build.glob("ember_cpu_*.o")
    )


def objects_with_initialisers(objects: list[pathlib.Path]) -> list[str]:
    bad = []
    for obj in objects:
        sections = subprocess.run(
            ["readelf", "-S", "-W", str(obj)], check=True, capture_output=True, text=True
        ).stdout
        if ".init_array" in sections or ".ctors" in sections:
            bad.append(str(obj))
    return bad


def local_function_addresses(library: pathlib.Path) -> set[int]:
    out = subprocess.run(
        ["nm", "--defined-only", "-P", "-t", "x", str(library)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    local = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "t":
            local.add(int(parts[2], 16))
    return local


def leaking_functions(library: pathlib.Path) -> list[tuple[str, str]]:
    """(function, first offending instruction) for AVX code outside the level namespaces."""
    local = local_function_addresses(library)
    disassembly = subprocess.run(
        ["objdump", "-d", "-C", "--no-show-raw-insn", str(library)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    leaks: list[tuple[str, str]] = []
    current = None
    reported = False
    for line in disassembly.splitlines():
        header = FUNCTION_HEADER.match(line)
        if header:
            current = header.group(2)
            reported = (
                LEVEL_NAMESPACE.search(current) is not None or int(header.group(1), 16) in local
            )
            continue
        if current is None or reported or "\t" not in line:
            continue
        instruction = line.split("\t", 1)[1].strip()
        mnemonic = instruction.split(" ", 1)[0]
        if mnemonic.startswith("v") or AVX_REGISTER.search(instruction):
            leaks.append((current, instruction))
            reported = True
    return leaks


def main() -> int:
    build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build")
    libraries = sorted(build.glob("**/libember.so"))
    if not libraries:
        print(f"check_isa_leaks: no libember.so under {build}", file=sys.stderr)
        return 2
    objects = level_objects(build)
    failures = 0
    initialisers = objects_with_initialisers(objects)
    for obj in initialisers:
        print(f"check_isa_leaks: {obj} has a static initialiser (runs on every CPU at import)")
    failures += len(initialisers)
    # A level-suffixed symbol left undefined would be a call to address 0 (its COMDAT group lost
    # to another level's: scripts/merge_level_objects.py renames the group keys too).
    undefined = subprocess.run(
        ["nm", "-u", str(libraries[0])], check=True, capture_output=True, text=True
    ).stdout
    dangling = [line.split()[-1] for line in undefined.splitlines() if ".cpu_avx" in line]
    for name in dangling[:20]:
        print(f"check_isa_leaks: {name} is undefined in {libraries[0]}")
    failures += len(dangling)
    leaks = leaking_functions(libraries[0])
    for function, instruction in leaks[:50]:
        print(f"check_isa_leaks: {function} uses '{instruction}' outside a level namespace")
    failures += len(leaks)
    print(
        f"check_isa_leaks: {len(objects)} level objects, {libraries[0]}: "
        f"{len(initialisers)} initialisers, {len(leaks)} leaking functions"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
