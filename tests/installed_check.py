"""Check an installed pbj (a wheel in a fresh environment): the engine, the README's examples, the real block.

Run by every wheel test of the release build (cibuildwheel's ``test-command``), by ``.ci/run``'s wheel
steps and by the Pyodide runner, with nothing but the installed pbj and its dependencies (no test tools,
no ``../shared``)::

    python tests/installed_check.py --engine native [--readme README.md]

It checks, printing one line each and exiting with status 1 at the first failure:

* ``pbj.engine()`` is the engine named by ``--engine`` (``native``: the wheel's C extension loaded;
  ``python``: the pure-Python wheel);
* every ```python block of the README (when ``--readme`` is given) runs, in order, in one namespace;
* the Hedera block shipped in ``pbj/data`` decodes, and both writers give back its exact bytes;
* its ProtoJSON (``pbj.to_json``/``pbj.from_json``) and text format (``pbj.to_text``/``pbj.from_text``)
  round trips give an equal message.
"""

from __future__ import annotations

import argparse
import gzip
import platform
import re
import sys
import time
import types
from importlib.resources import files
from pathlib import Path

import pbj
from pbj.cli import BLOCK_FILE, BLOCK_TYPE, SCHEMA_FILE

_PYTHON_BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


class CheckFailed(Exception):
    """One check of the installed pbj failed (the message says which and how)."""


def check_engine(expected: str) -> str:
    if pbj.engine() != expected:
        raise CheckFailed(f"engine is {pbj.engine()!r}, expected {expected!r}")
    return f"engine: {pbj.engine()}"


def check_readme(readme: Path) -> str:
    text = readme.read_text(encoding="utf-8")
    blocks = [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in _PYTHON_BLOCK.finditer(text)]
    if not blocks:
        raise CheckFailed(f"{readme} has no python blocks")
    module = types.ModuleType("pbj_readme")
    sys.modules[module.__name__] = module  # forward references by name resolve as in a user's module
    try:
        for line, code in blocks:
            exec(compile(code, f"{readme.name}:{line}", "exec", dont_inherit=True), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    return f"readme: {len(blocks)} examples ran"


def check_block() -> list[str]:
    shipped = files("pbj") / "data"
    ns = pbj.load_descriptor_set((shipped / SCHEMA_FILE).read_bytes())
    block_type = ns[BLOCK_TYPE]
    raw = gzip.decompress((shipped / BLOCK_FILE).read_bytes())
    started = time.perf_counter()
    block = pbj.decode(block_type, raw)
    took = time.perf_counter() - started
    if pbj.encode(block) != raw:
        raise CheckFailed("the forward writer did not give the block's bytes")
    if pbj.encode(block, reverse=True) != raw:
        raise CheckFailed("the reverse writer did not give the block's bytes")
    lines = [f"block: {len(raw):,} bytes, {len(block.items):,} items, byte-exact with both writers "
             f"(decoded in {took:.2f} s)"]
    if pbj.from_json(block_type, pbj.to_json(block)) != block:
        raise CheckFailed("the block's ProtoJSON round trip gave a different message")
    lines.append("json: round trip equal")
    if pbj.from_text(block_type, pbj.to_text(block)) != block:
        raise CheckFailed("the block's text-format round trip gave a different message")
    lines.append("text: round trip equal")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Run the checks; 0 when all pass, 1 (and the failure on stderr) otherwise."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=("native", "python"), required=True, help="the engine expected")
    parser.add_argument("--readme", type=Path, help="run this README's python blocks too")
    args = parser.parse_args(argv)
    print(f"pbj {pbj.__version__} on {platform.python_implementation()} {platform.python_version()} "
          f"({sys.platform}, {platform.machine()})")
    try:
        print(check_engine(args.engine))
        if args.readme is not None:
            print(check_readme(args.readme))
        for line in check_block():
            print(line)
    except CheckFailed as exc:
        print(f"installed_check: FAILED: {exc}", file=sys.stderr)
        return 1
    print("installed_check: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
