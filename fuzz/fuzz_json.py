"""atheris entry point: ``pbj.from_json`` on hostile text.

Each input picks a message class (first byte: the hand-declared targets of
:mod:`fuzz.targets` and the proto2 schema) and a mode (second byte): the rest
of the input as the JSON text (bytes, so invalid UTF-8 is tried too), or
edit operations applied to a valid ProtoJSON text of a ``pbj.testing.values``
example, or one nested several thousand levels deep. :func:`fuzz.targets.check_json`
checks the properties; a failing text is saved first. Usage: ``fuzz/README.md``.
"""

from __future__ import annotations

import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fuzz import targets as T

KEEP_GOING = os.environ.get("PBJ_FUZZ_KEEP_GOING") == "1"
SEEDS_PER_TARGET = int(os.environ.get("PBJ_FUZZ_SEEDS", "30"))


def _seeds(classes) -> dict[type, list[bytes]]:
    import pbj
    import pbj.testing

    warnings.filterwarnings("ignore")
    out = {}
    for cls in classes:
        strategy = pbj.testing.values(cls, max_depth=2, unknown_fields=False)
        out[cls] = [pbj.to_json(strategy.example()).encode() for _ in range(SEEDS_PER_TARGET)]
    return out


def build(data: bytes, classes, seeds) -> tuple[type, bytes]:
    """The class and text one fuzz input stands for (see the module docstring)."""
    if len(data) < 2:
        return classes[0], data
    cls = classes[data[0] % len(classes)]
    rest = data[2:]
    if data[1] < 96 or len(rest) < 2:
        return cls, rest
    seed = seeds[cls][int.from_bytes(rest[:2], "little") % len(seeds[cls])]
    if data[1] >= 250:
        depth = 2000 + rest[0] * 40
        return cls, b'{"a":' * depth + seed + b"}" * depth if data[1] & 1 else b"[" * depth + seed
    ops = [(rest[i] % 7, int.from_bytes(rest[i + 1:i + 4], "little"), rest[i + 4:i + 4 + (rest[i] >> 6)])
           for i in range(2, max(len(rest) - 3, 2), 7)][:6]
    return cls, T.mutate(seed, ops)


def one_input(data: bytes, classes, seeds) -> None:
    """Run one fuzz input; a failing text is saved first."""
    cls, text = build(data, classes, seeds)
    try:
        T.check_json(cls, text)
    except Exception:
        name = next(t.name for t in T.decode_targets() if t.cls is cls)
        path = T.save_failure(f"json-{name}", text, ".json")
        if not KEEP_GOING:
            raise
        import traceback

        print(f"FAULT saved to {path}:\n{traceback.format_exc(limit=4)}", file=sys.stderr, flush=True)


def main() -> None:
    import atheris

    classes = [t.cls for t in T.decode_targets() if t.name != "blockitem"]
    seeds = _seeds(classes)
    if os.environ.get("PBJ_FUZZ_NO_COVERAGE") != "1":
        atheris.instrument_all()
    atheris.Setup(sys.argv, lambda data: one_input(data, classes, seeds))
    atheris.Fuzz()


if __name__ == "__main__":
    main()
