"""Prints the [build-system] requires of pyproject.toml, one per line, so that scripts/setup-dev.sh
installs exactly the pins the isolated build uses (the file stays the single source of them)."""

import re
import sys
from pathlib import Path

text = Path(__file__).resolve().parent.parent.joinpath("pyproject.toml").read_text()
try:
    import tomllib

    requires = tomllib.loads(text)["build-system"]["requires"]
except ModuleNotFoundError:  # Python < 3.11: the requires list is a plain array of strings
    block = re.search(r"^\[build-system\]\s*requires\s*=\s*\[(.*?)\]", text, re.S | re.M)
    if block is None:
        sys.exit("pyproject.toml has no [build-system] requires")
    body = re.sub(r"#[^\n]*", "", block.group(1))
    requires = re.findall(r'"([^"]+)"', body)
print("\n".join(requires))
