"""atheris entry point: ``pbj.decode`` on hostile bytes, checked against Google's protobuf (upb).

Each input picks a decode target of :mod:`fuzz.targets` (first byte) and a
mode (second byte): the rest is either the encoding itself, or edit
operations (:func:`fuzz.targets.mutate`) applied to a seed: a real
``BlockItem`` of the shipped block, or a valid encoding of a
``pbj.testing.values`` example. :func:`fuzz.targets.check_decode` checks every
property; a failure is a Python exception, which atheris reports with the
input (``crash-<sha1>``). Usage and the long-run command: ``fuzz/README.md``.
"""

from __future__ import annotations

import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fuzz import targets as T

#: With PBJ_FUZZ_KEEP_GOING=1 a failing input is saved and reported, and the run goes on.
KEEP_GOING = os.environ.get("PBJ_FUZZ_KEEP_GOING") == "1"
SEEDS_PER_TARGET = int(os.environ.get("PBJ_FUZZ_SEEDS", "40"))
#: PBJ_FUZZ_ENGINES=python,native checks every input on each engine named (``pbj.use_engine``),
#: each against upb; unset, the engine ``pbj`` picks (native when built).
ENGINES = tuple(e for e in os.environ.get("PBJ_FUZZ_ENGINES", "").split(",") if e)
#: PBJ_FUZZ_STATS=N prints the counts (per engine, and the faults) every N inputs: libFuzzer ends
#: the process without running Python's exit handlers, so pick N dividing -runs.
STATS_EVERY = int(os.environ.get("PBJ_FUZZ_STATS", "0") or 0)
_STATS: dict[str, dict[str, int]] = {}
_RUN = {"inputs": 0, "faults": 0}


def _seeds() -> dict[str, list[bytes]]:
    """Valid encodings for every target: examples of pbj.testing.values, and the block's items.

    The examples are the same in every run (hypothesis derandomized), so that a run with a fixed
    ``-seed`` (CI's) sees the same inputs every time."""
    import pbj
    import pbj.testing

    warnings.filterwarnings("ignore")
    seeds: dict[str, list[bytes]] = {}
    for t in T.decode_targets():
        if t.name == "blockitem":
            seeds[t.name] = list(T.block_items())
            continue
        seeds[t.name] = _examples(pbj.testing.values(t.cls, max_depth=2), SEEDS_PER_TARGET)
    return seeds


def _examples(strategy, count: int) -> list[bytes]:
    """The encodings of up to ``count`` examples of ``strategy``, the same ones in every run."""
    import hypothesis

    import pbj

    found: list[bytes] = []

    @hypothesis.settings(derandomize=True, database=None, max_examples=count, deadline=None,
                         phases=[hypothesis.Phase.generate], suppress_health_check=list(hypothesis.HealthCheck))
    @hypothesis.given(strategy)
    def draw(value) -> None:
        found.append(pbj.encode(value))

    draw()
    return found[:count]


def pick(data: bytes, targets, seeds) -> tuple:
    """The target and the message of one fuzz input: first byte the target, second the mode (see the
    module docstring); shared by the native engine's harness (``fuzz/fuzz_native.py``)."""
    if len(data) < 2:
        return targets[0], data
    t = targets[data[0] % len(targets)]
    return t, data[2:] if data[1] < 64 or len(data) < 4 else _mutated(data[2:], seeds[t.name])


def one_input(data: bytes, targets, seeds) -> None:
    """Run one fuzz input (see the module docstring) on each engine of :data:`ENGINES`; a failing
    decode input is saved first."""
    t, message = pick(data, targets, seeds)
    _RUN["inputs"] += 1
    for engine in ENGINES or ("",):
        if engine:
            import pbj

            pbj.use_engine(engine)
        T.STATS = _STATS.setdefault(engine or "default", dict.fromkeys(T.STATS, 0))
        try:
            T.check_decode(t, message)
        except Exception:
            _RUN["faults"] += 1
            path = T.save_failure(f"decode-{t.name}", message)
            if not KEEP_GOING:
                raise
            import traceback

            print(f"FAULT ({engine or 'default'} engine) saved to {path}:\n{traceback.format_exc(limit=3)}",
                  file=sys.stderr, flush=True)
    if STATS_EVERY and _RUN["inputs"] % STATS_EVERY == 0:
        print(f"decode fuzz: {_RUN['inputs']:,} inputs, {_RUN['faults']} faults; {_STATS}", file=sys.stderr,
              flush=True)


def _mutated(rest: bytes, pool: list[bytes]) -> bytes:
    """A seed of ``pool`` (chosen by ``rest[:2]``) edited by the operations ``rest[2:]`` encodes."""
    seed = pool[int.from_bytes(rest[:2], "little") % len(pool)]
    ops = []
    pos = 2
    while pos + 4 <= len(rest) and len(ops) < 8:
        kind = rest[pos] % 7
        where = int.from_bytes(rest[pos + 1:pos + 4], "little")
        n = rest[pos] >> 5
        ops.append((kind, where, rest[pos + 4:pos + 4 + n]))
        pos += 4 + n
    return T.mutate(seed, ops)


def main() -> None:
    import atheris

    targets = T.decode_targets()
    seeds = _seeds()
    if os.environ.get("PBJ_FUZZ_NO_COVERAGE") != "1":
        atheris.instrument_all()   # after the codecs are compiled, so the generated parsers are covered too
    atheris.Setup(sys.argv, lambda data: one_input(data, targets, seeds))
    atheris.Fuzz()


if __name__ == "__main__":
    main()
