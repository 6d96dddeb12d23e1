"""atheris entry point: ``pbj.load_descriptor_set`` on corrupt and mutated descriptor sets.

Each input picks a valid descriptor set (first byte: the small sets of
:func:`fuzz.targets.small_sets`, now and then a conformance set or the
shipped HAPI set) and a
mode (second byte): byte edits (:func:`fuzz.targets.mutate`), structured
edits of the descriptors (:func:`fuzz.targets.mutate_descriptor`), or the
rest of the input as the set itself. :func:`fuzz.targets.check_loader`
checks the properties. Usage: ``fuzz/README.md``.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fuzz import targets as T

KEEP_GOING = os.environ.get("PBJ_FUZZ_KEEP_GOING") == "1"


def build(data: bytes, sets: tuple[bytes, ...]) -> bytes:
    """The descriptor set one fuzz input stands for (see the module docstring)."""
    if len(data) < 2:
        return data
    # the small sets load in ~0.1 s; the conformance sets (~2 s) and HAPI (~5 s) now and then
    pool = sets[:2] if data[0] < 254 else sets[2:] or sets if data[0] < 255 else (T.hapi_set(),)
    base = pool[data[0] % len(pool)]
    mode = data[1] % 4
    rest = data[2:]
    if mode == 0:
        return rest
    if mode == 1:
        ops = [(rest[i] % 7, int.from_bytes(rest[i + 1:i + 4], "little"), rest[i + 4:i + 4 + (rest[i] >> 6)])
               for i in range(0, max(len(rest) - 3, 0), 7)][:6]
        return T.mutate(base, ops)
    return T.mutate_descriptor(base, rest[:30])


def one_input(data: bytes, sets) -> None:
    """Run one fuzz input; a failing descriptor set is saved first."""
    fds = build(data, sets)
    try:
        T.check_loader(fds)
    except Exception:
        path = T.save_failure("loader", fds, ".binpb")
        if not KEEP_GOING:
            raise
        import traceback

        print(f"FAULT saved to {path}:\n{traceback.format_exc(limit=4)}", file=sys.stderr, flush=True)


def main() -> None:
    import atheris

    sets = T.small_sets()
    if os.environ.get("PBJ_FUZZ_NO_COVERAGE") != "1":
        atheris.instrument_all()
    atheris.Setup(sys.argv, lambda data: one_input(data, sets))
    atheris.Fuzz()


if __name__ == "__main__":
    main()
