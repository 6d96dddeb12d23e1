"""atheris entry point: the native decode_to_arrow (pbj/_native/arrow.c) on hostile bytes, against the Python path.

Each input picks a target of :mod:`fuzz.targets` and a mode as
:mod:`fuzz.fuzz_native` does (the rest: the encoding itself, or edits of a
seed). The C walker's table for ``[message, seed]`` (``pbj.arrow.native``)
must be the table of ``to_arrow([decode(...) ...])``, with the default
options and with ``recursion_depth=0`` (every recursive message past the
depth: the canonical-form check and the re-encoding), one of them in turn
(both on the inputs that compare whole tables); where the Python path
raises (``DecodeError``, or ``EncodeError`` for a value Arrow cannot hold)
the walker must decline (``None``). The ``BlockItem`` target (a table of
24,000 columns) compares whole tables every ``PBJ_FUZZ_TABLE_EVERY`` inputs
(default 25) and the decline rule on every input.

Run it on the sanitized build with ``PBJ_FUZZ_HARNESS=fuzz/fuzz_arrow.py
fuzz/native_asan.sh -runs=N``: a sanitizer report aborts the run; a
difference is an ``AssertionError`` atheris reports with the input.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fuzz import targets as T
from fuzz.fuzz_decode import _seeds, pick

_COUNT = [0]
_STATS_EVERY = int(os.environ.get("PBJ_FUZZ_STATS", "0") or 0)
_TABLE_EVERY = int(os.environ.get("PBJ_FUZZ_TABLE_EVERY", "25") or 25)
#: PBJ_FUZZ_ARROW_SKIP=blockitem leaves a target out (its 24,000-column table is slow under ASan).
_SKIP = set(filter(None, os.environ.get("PBJ_FUZZ_ARROW_SKIP", "").split(",")))
STATS = {"native": 0, "declined": 0, "python error": 0}


def check_arrow(cls, payloads: list[bytes], *, whole_table: bool, compare: bool = True) -> None:
    """The walker's table of ``payloads`` is the Python path's (or it declines where Python raises).

    ``whole_table``: both option sets, tables compared; else one in turn, compared when ``compare``.
    """
    import pbj
    import pbj.arrow
    from pbj.arrow import native
    from pbj.arrow.mapping import Options
    from tests.test_arrow_native import assert_same_table

    for depth in (1, 0) if whole_table else (_COUNT[0] % 2,):
        options = Options(recursion_depth=depth)
        got = native.decode_table(cls, options, payloads, pbj.DEFAULT_MAX_DEPTH)
        try:
            decoded = [pbj.decode(cls, p) for p in payloads]
            wanted = whole_table or compare or got is None
            expected = pbj.arrow.to_arrow(decoded, cls, recursion_depth=depth) if wanted else None
        except pbj.PbjError:
            STATS["python error"] += 1
            assert got is None, "the walker made a table of input the Python path refuses"
            continue
        if got is None:
            STATS["declined"] += 1
            continue
        STATS["native"] += 1
        if expected is not None:
            assert_same_table(got, expected)


def one_input(data: bytes, targets, seeds) -> None:
    t, message = pick(data, targets, seeds)
    _COUNT[0] += 1
    if _STATS_EVERY and _COUNT[0] % _STATS_EVERY == 0:
        print(f"arrow fuzz: {_COUNT[0]:,} inputs: {STATS}", file=sys.stderr, flush=True)
    seed = seeds[t.name][_COUNT[0] % len(seeds[t.name])] if seeds.get(t.name) else b""
    try:
        check_arrow(t.cls, [message, seed], whole_table=_COUNT[0] % _TABLE_EVERY == 0,
                    compare=t.name != "blockitem")
    except Exception:
        path = T.save_failure(f"arrow-{t.name}", message)
        print(f"FAULT saved to {path}", file=sys.stderr, flush=True)
        raise


def main() -> None:
    import atheris

    from pbj import _native

    if not _native.available():
        raise SystemExit("the native engine is not built")
    targets = tuple(t for t in T.decode_targets() if t.name not in _SKIP)
    seeds = _seeds()
    atheris.Setup(sys.argv, lambda data: one_input(data, targets, seeds))
    atheris.Fuzz()


if __name__ == "__main__":
    main()
