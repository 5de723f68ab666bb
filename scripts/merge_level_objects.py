#!/usr/bin/env python3
"""Merges one CPU capability level's kernel objects into a single object whose shared inline
functions belong to that level alone (docs/design/cpu-dispatch.md, "What keeps the baseline
safe").

An inline function or template from a header outside kernels/ (core/half.h's conversions,
core/error.h's str_cat, std::vector's members) is emitted as a weak symbol by every object that
does not inline it, and the linker keeps one copy for the whole library. If that copy came from
an AVX-512 object, baseline code would call AVX-512 instructions. So each weak function this
level defines gets a level suffix (`.cpu_avx2`, ...): the level's objects still share one copy
among themselves, and every other level and the baseline keep their own.

    merge_level_objects.py --level avx2 --ld ld --objcopy objcopy --nm nm -o out.o a.o b.o ...
"""

from __future__ import annotations

import argparse
import pathlib
import re
import subprocess
import tempfile

GROUP_MEMBER = re.compile(r"^\s*\[\s*(\d+)\]\s+\S")


def weak_functions(nm: str, obj: pathlib.Path) -> list[str]:
    """Defined weak function symbols (nm type W) not already in a level namespace."""
    out = subprocess.run(
        [nm, "--defined-only", "-P", str(obj)], check=True, capture_output=True, text=True
    ).stdout
    names = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[1] == "W" and "cpu_avx" not in parts[0]:
            names.append(parts[0])
    return sorted(set(names))


def group_signatures_to_rename(obj: pathlib.Path, renamed: set[str]) -> list[str]:
    """Signatures of the COMDAT groups that hold a renamed function. A constructor's group is
    keyed by a name of its own (C5 / D5 in the mangling), which must get the level suffix too:
    otherwise the linker would drop this level's group as a duplicate of the baseline's and leave
    the renamed symbols undefined."""
    groups = subprocess.run(
        ["readelf", "-g", "-W", str(obj)], check=True, capture_output=True, text=True
    ).stdout
    symbols = subprocess.run(
        ["readelf", "-s", "-W", str(obj)], check=True, capture_output=True, text=True
    ).stdout
    renamed_sections = set()
    for line in symbols.splitlines():
        parts = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(parts) >= 8 and parts[7] in renamed and parts[6].isdigit():
            renamed_sections.add(int(parts[6]))
    signatures = []
    current = None
    for line in groups.splitlines():
        if line.startswith("COMDAT group section"):
            current = line[line.index("[", line.index("`")) + 1 : line.rindex("]")]
            continue
        member = GROUP_MEMBER.match(line)
        if current and member:
            index = int(member.group(1))
            if index in renamed_sections and "cpu_avx" not in current:
                signatures.append(current)
                current = None  # one member is enough
    return sorted(set(signatures) - renamed)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--level", required=True)
    p.add_argument("--ld", default="ld")
    p.add_argument("--objcopy", default="objcopy")
    p.add_argument("--nm", default="nm")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("objects", nargs="+")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        merged = pathlib.Path(tmp, "merged.o")
        subprocess.run([args.ld, "-r", "-o", str(merged), *args.objects], check=True)
        renames = pathlib.Path(tmp, "renames.txt")
        suffix = f".cpu_{args.level}"
        functions = weak_functions(args.nm, merged)
        names = functions + group_signatures_to_rename(merged, set(functions))
        renames.write_text("".join(f"{n} {n}{suffix}\n" for n in names))
        subprocess.run(
            [args.objcopy, f"--redefine-syms={renames}", str(merged), args.output], check=True
        )


if __name__ == "__main__":
    main()
