"""atheris entry point: the native engine (pbj/_native) on hostile bytes, against the pure-Python engine.

Each input picks a decode target of :mod:`fuzz.targets` (first byte) and a mode
(second byte), as :mod:`fuzz.fuzz_decode` does: the rest is the encoding itself
or edit operations applied to a seed (a real ``BlockItem``, a valid encoding of
a ``pbj.testing.values`` example). :func:`fuzz.native_checks.check_same`
decodes it with both engines and, when it is valid, encodes the value with the
native forward and reverse writers and the Python writer.

Run it on the extension built with AddressSanitizer and UndefinedBehaviorSanitizer
(``fuzz/native_asan.sh`` builds that copy and runs this file under it): a
sanitizer report aborts the run; a disagreement between the engines is an
``AssertionError`` that atheris reports with the input. Counts are printed every
``PBJ_FUZZ_STATS=N`` inputs. Usage: ``fuzz/README.md``.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# every input shares its repeated sub-messages (share.c), however small: a switch the engine reads
# once, when it is imported (pbj/_native/module.c)
os.environ.setdefault("PBJ_NATIVE_SHARE_MIN", "0")

from fuzz import targets as T
from fuzz.fuzz_decode import _seeds, pick

_COUNT = [0]
#: PBJ_FUZZ_STATS=N prints the counts of fuzz.native_checks.STATS every N inputs (libFuzzer ends the
#: process without running Python's exit handlers).
_STATS_EVERY = int(os.environ.get("PBJ_FUZZ_STATS", "0") or 0)


def one_input(data: bytes, targets, seeds) -> None:
    """Run one fuzz input (see the module docstring); a failing input is saved first."""
    from fuzz.native_checks import check_same

    t, message = pick(data, targets, seeds)
    _COUNT[0] += 1
    if _STATS_EVERY and _COUNT[0] % _STATS_EVERY == 0:
        from fuzz.native_checks import STATS

        print(f"native fuzz: {_COUNT[0]:,} inputs: {STATS}", file=sys.stderr, flush=True)
    try:
        check_same(t.cls, message)
    except Exception:
        path = T.save_failure(f"native-{t.name}", message)
        print(f"FAULT saved to {path}", file=sys.stderr, flush=True)
        raise


def main() -> None:
    import atheris

    from pbj import _native

    if not _native.available():
        raise SystemExit("the native engine is not built")
    targets = T.decode_targets() + T.native_targets()  # extensions, message sets, merges, closed enums
    seeds = {**_seeds(), **T.native_seeds()}
    atheris.Setup(sys.argv, lambda data: one_input(data, targets, seeds))
    atheris.Fuzz()


if __name__ == "__main__":
    main()
