"""atheris entry point: the native engine (pbj/_native) on hostile bytes, against the pure-Python engine.

Each input picks a target of :func:`fuzz_targets` (first byte) and a mode
(second byte), as :mod:`fuzz.fuzz_decode` does: the rest is the encoding itself
or edit operations applied to a seed (a real ``BlockItem``, a valid encoding of
a ``pbj.testing.values`` example, a conformance payload, a field case's bytes).
:func:`fuzz.native_checks.check_same` decodes it with both engines and the
walker's counting sink and, when it is valid, encodes the value with the native
forward and reverse writers and the Python writer.

Run it on the extension built with AddressSanitizer and UndefinedBehaviorSanitizer
(``fuzz/native_asan.sh`` builds that copy and runs this file under it): a
sanitizer report aborts the run; a failed check (a disagreement between the
engines) is saved with :func:`fuzz.targets.save_failure` and ends the run with
status 70 (``PBJ_FUZZ_KEEP_GOING=1``: the run goes on). Counts are printed every
``PBJ_FUZZ_STATS=N`` inputs. Usage: ``fuzz/README.md``.
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# every input shares its repeated sub-messages (share.c), however small: a switch the engine reads
# once, when it is imported (pbj/_native/module.c)
os.environ.setdefault("PBJ_NATIVE_SHARE_MIN", "0")

from fuzz import targets as T
from fuzz.fuzz_decode import _seeds, pick

_COUNT = [0]
_FAULTS = [0]
#: PBJ_FUZZ_KEEP_GOING=1: a failed check is saved and reported, and the run goes on (a sanitizer
#: report still ends it); otherwise the first one ends the run with status 70.
KEEP_GOING = os.environ.get("PBJ_FUZZ_KEEP_GOING") == "1"
#: PBJ_FUZZ_STATS=N prints the counts of fuzz.native_checks.STATS every N inputs (libFuzzer ends the
#: process without running Python's exit handlers).
_STATS_EVERY = int(os.environ.get("PBJ_FUZZ_STATS", "0") or 0)


#: PBJ_FUZZ_ORACLE_EVERY=N: every input runs the native engine's own checks (fuzz.native_checks.check_native:
#: the engine's decode, the walker's counting sink, the entry points, every native writer, the round
#: trip), and one input in N also the pure-Python engine as the oracle (check_same: its decoder and
#: writers must agree, value for value, error for error). 1 (the default): every input, both.
ORACLE_EVERY = max(1, int(os.environ.get("PBJ_FUZZ_ORACLE_EVERY", "1") or 1))


def one_input(data: bytes, targets, seeds) -> None:
    """Run one fuzz input (see the module docstring); a failing input is saved first."""
    from fuzz.native_checks import check_native, check_same

    t, message = pick(data, targets, seeds)
    _COUNT[0] += 1
    if _STATS_EVERY and _COUNT[0] % _STATS_EVERY == 0:
        from fuzz.native_checks import NATIVE_STATS, STATS

        print(f"native fuzz: {_COUNT[0]:,} inputs, {_FAULTS[0]} faults; native checks {NATIVE_STATS}; "
              f"with the Python engine (1 in {ORACLE_EVERY}) {STATS}", file=sys.stderr, flush=True)
    try:
        (check_same if _COUNT[0] % ORACLE_EVERY == 0 else check_native)(t.cls, message)
    except Exception:
        _FAULTS[0] += 1
        path = T.save_failure(f"native-{t.name}", message)
        print(f"FAULT {_FAULTS[0]} saved to {path}:\n{traceback.format_exc(limit=4)}", file=sys.stderr, flush=True)
        if not KEEP_GOING:
            # not raised through atheris: a C++ exception thrown under the preloaded libasan ends in a
            # sanitizer CHECK on __cxa_throw that hides the fault; the saved file replays it
            os._exit(70)


def fuzz_targets() -> tuple[tuple[T.Target, ...], dict[str, list[bytes]]]:
    """The harness's targets, in the order the first byte of an input picks them, and their seeds.

    The decode targets and the native engine's own (extensions, message sets, closed enums), the
    conformance suite's test messages (seeded with every binary payload its runner sends) and one
    target per binary field case of ``../shared/cases`` (its schema loaded from the case's text)."""
    shared = Path(os.environ.get("PBJ_SHARED", Path(T.__file__).resolve().parents[2] / "shared"))
    cases = T.case_targets(shared)
    targets = T.decode_targets() + T.native_targets() + T.conformance_targets() + tuple(t for t, _ in cases)
    seeds = {**_seeds(), **T.native_seeds(), **T.conformance_seeds(shared), **{t.name: raw for t, raw in cases}}
    return targets, seeds


def check_engine() -> None:
    """Refuse to run on any build but the sanitized one ``fuzz/native_asan.sh`` names (``PBJ_FUZZ_SANITIZED``)."""
    from pbj import _native

    if not _native.available():
        raise SystemExit("the native engine is not built")
    where = os.environ.get("PBJ_FUZZ_SANITIZED")
    if where and not _native._engine.__file__.startswith(where):
        raise SystemExit(f"the native engine loaded is {_native._engine.__file__}, not the sanitized build in {where}")


def main() -> None:
    import atheris

    check_engine()
    targets, seeds = fuzz_targets()
    print(f"native fuzz: {len(targets)} targets: {', '.join(t.name for t in targets)}", file=sys.stderr, flush=True)
    atheris.Setup(sys.argv, lambda data: one_input(data, targets, seeds))
    atheris.Fuzz()


if __name__ == "__main__":
    main()
