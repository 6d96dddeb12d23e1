"""What a program pays before its first decoded block: pbj against Google's protobuf (upb).

    python -m benchmarks.first_use                 # best of 3, alternating, pbj and Google
    python -m benchmarks.first_use --runs 5 --engine python

Each run is a fresh interpreter per library (the libraries run alternately, so drift on a busy
machine falls on both). Inside it, with the thread's CPU clock (``time.process_time``), three
phases are timed one after the other, from before the first import of the library:

* *import*: pbj: ``import pbj``; Google: ``descriptor_pb2``, ``descriptor_pool`` and
  ``message_factory``;
* *load*: pbj: ``pbj.load_descriptor_set`` of the shipped HAPI set; Google: decoding the set
  (``FileDescriptorSet.FromString``), a new ``DescriptorPool`` and ``pool.Add`` of each of its files;
* *class*: pbj: ``ns[name]`` of the block message; Google: ``message_factory.GetMessageClass``;
* *first decode*: decode the shipped block (4 MB) once (pbj: ``pbj.decode``; Google:
  ``ParseFromString``).

The files are read (and the block gunzipped) before the clock starts. Reported: per phase the best
of the runs, the total of the best run, the ratio pbj / Google, and the peak RSS of each process.

Imports are timed as an installed package runs them, from cached bytecode: the children write and
read their ``.pyc`` files under a ``PYTHONPYCACHEPREFIX`` of their own (a temporary directory;
nothing is written beside the sources) even when ``PYTHONDONTWRITEBYTECODE`` is set, and an untimed
run of each library fills it first. ``--no-bytecode-cache`` keeps the environment as it is (with
``PYTHONDONTWRITEBYTECODE`` set, every import then compiles its sources, both libraries alike).

pbj's schema cache (``pbj.loader.cache``: the set's names and its classes' declarations, kept
on disk by the process before) is a folder of the run's own, filled by the untimed run, so the
timed processes are second processes, as a program's every start after its first is;
``--schema-cache off`` runs them with ``PBJ_NO_CACHE=1`` (each a first process).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile

BLOCK_TYPE = "com.hedera.hapi.block.stream.Block"

_CHILD = r"""
import gzip, json, resource, sys, time
from importlib import resources
lib, block_path, schema_path = sys.argv[1:4]
raw = open(block_path, "rb").read()
if raw[:2] == b"\x1f\x8b":
    raw = gzip.decompress(raw)
schema = open(schema_path, "rb").read()
clock = time.process_time
regions = sys.argv[4] if len(sys.argv) > 4 else None
if regions:  # under callgrind: a phase ends with a call of getppid, the next starts with another (callgrind_regions)
    import os
    marks = []
    clock = lambda: marks.append(os.getppid() if marks else None) or os.getppid()
t0 = clock()
if lib == "pbj":
    import pbj
    t1 = clock()
    ns = pbj.load_descriptor_set(schema)
    tc = clock()
    cls = ns[BLOCK_TYPE]
    t2 = clock()
    obj = pbj.decode(cls, raw)
    t3 = clock()
    engine = pbj.engine()
else:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    t1 = clock()
    fds = descriptor_pb2.FileDescriptorSet.FromString(schema)
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    tc = clock()
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(BLOCK_TYPE))
    t2 = clock()
    obj = cls()
    obj.ParseFromString(raw)
    t3 = clock()
    from google.protobuf.internal import api_implementation
    engine = api_implementation.Type()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
if regions:
    open(regions + "/regions.txt", "w").write("\n".join(["import", "load", "class", "decode"]))
    sys.exit(0)
print(json.dumps({"import": t1 - t0, "load": tc - t1, "class": t2 - tc, "decode": t3 - t2, "engine": engine,
                  "rss_mb": rss}))
""".replace("BLOCK_TYPE", repr(BLOCK_TYPE))


def _paths() -> tuple[str, str]:
    from pbj.bench.workload import BLOCK_FILE, SCHEMA_FILE
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "pbj", "data")
    return os.path.join(here, BLOCK_FILE), os.path.join(here, SCHEMA_FILE)


PHASES = ("import", "load", "class", "decode")


#: How the children use pbj's schema cache: ``"warm"`` (a folder of the run's own, filled by the
#: untimed run) or ``"off"`` (``PBJ_NO_CACHE=1``); set by :func:`main`.
SCHEMA_CACHE = {"mode": "warm", "folder": ""}


def _child_env(engine: str | None, pycache: str | None) -> dict[str, str]:
    env = dict(os.environ)
    if engine is not None:
        env["PBJ_ENGINE"] = engine
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = pycache
    if SCHEMA_CACHE["mode"] == "off" or not SCHEMA_CACHE["folder"]:
        env["PBJ_NO_CACHE"] = "1"
    else:
        env.pop("PBJ_NO_CACHE", None)
        env["PBJ_CACHE_DIR"] = SCHEMA_CACHE["folder"]
    return env


def count_once(lib: str, engine: str | None, pycache: str | None) -> dict[str, int] | None:
    """The phases of one fresh interpreter for ``lib`` in instructions (callgrind), or ``None`` without valgrind.

    The child marks each phase with calls of ``os.getppid`` (:mod:`benchmarks.callgrind_regions`);
    the marks cost a few hundred instructions a phase.
    """
    from benchmarks.callgrind_regions import count_command

    block, schema = _paths()
    return count_command(lambda folder: [sys.executable, "-c", _CHILD, lib, block, schema, folder],
                         env=_child_env(engine, pycache))


def run_once(lib: str, engine: str | None, pycache: str | None = None) -> dict:
    """One fresh interpreter timing the phases for ``lib`` (``"pbj"`` or ``"google"``).

    Args:
        lib: ``"pbj"`` or ``"google"``.
        engine: pbj's engine (``PBJ_ENGINE``), or ``None`` for the default.
        pycache: a directory for the child's bytecode cache (``PYTHONPYCACHEPREFIX``, written
            even under ``PYTHONDONTWRITEBYTECODE``), or ``None`` to keep the environment.

    Returns:
        The phases' CPU seconds, the engine's name and the peak RSS in MB.
    """
    block, schema = _paths()
    out = subprocess.run([sys.executable, "-c", _CHILD, lib, block, schema], env=_child_env(engine, pycache),
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    """Run both libraries ``--runs`` times, alternately, and print the best phases and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--engine", choices=("native", "python"), default=None, help="pbj's engine (PBJ_ENGINE)")
    parser.add_argument("--json", default=None, help="write every run to this file")
    parser.add_argument("--no-bytecode-cache", action="store_true",
                        help="keep the environment's bytecode settings (see the module's docstring)")
    parser.add_argument("--instructions", action="store_true",
                        help="count each phase's instructions with callgrind (one run of each library) instead")
    parser.add_argument("--schema-cache", choices=("warm", "off"), default="warm",
                        help="pbj's schema cache: warm (filled by an untimed run) or off (PBJ_NO_CACHE=1)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="pbj-first-use-cache-") as folder:
        SCHEMA_CACHE.update(mode=args.schema_cache, folder=folder)
        if args.instructions:
            _instructions(args)
        else:
            _times(args)


def _times(args: argparse.Namespace) -> None:
    runs: dict[str, list[dict]] = {"pbj": [], "google": []}
    with tempfile.TemporaryDirectory(prefix="pbj-first-use-") as tmp:
        pycache = None if args.no_bytecode_cache else tmp
        for lib in runs:
            run_once(lib, args.engine, pycache)  # untimed: writes the bytecode cache and pbj's schema cache
        for _ in range(args.runs):
            for lib in runs:
                runs[lib].append(run_once(lib, args.engine, pycache))
    cached = "cached bytecode" if not args.no_bytecode_cache else "bytecode as the environment has it"
    print(f"CPython {sys.version.split()[0]} on {platform.machine()} {platform.system()}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}; {cached}")
    print(f"CPU seconds (process clock), best of {args.runs} fresh processes, the libraries alternating; "
          f"pbj's schema cache {args.schema_cache}")
    heads = (f"pbj ({runs['pbj'][0]['engine']})", f"google ({runs['google'][0]['engine']})")
    print(f"{'phase':<14}{heads[0]:>16}{heads[1]:>18}{'ratio':>9}")
    for phase in PHASES:
        p, g = (min(r[phase] for r in runs[lib]) for lib in ("pbj", "google"))
        print(f"{phase:<14}{p:>16.4f}{g:>18.4f}{p / g:>9.1f}")
    p, g = (min(sum(r[k] for k in PHASES) for r in runs[lib]) for lib in ("pbj", "google"))
    print(f"{'total':<14}{p:>16.4f}{g:>18.4f}{p / g:>9.1f}")
    p, g = (min(r["rss_mb"] for r in runs[lib]) for lib in ("pbj", "google"))
    print(f"{'peak RSS, MB':<14}{p:>16.0f}{g:>18.0f}{p / g:>9.1f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(runs, fh, indent=1)


def _instructions(args: argparse.Namespace) -> None:
    counts = {}
    with tempfile.TemporaryDirectory(prefix="pbj-first-use-") as tmp:
        pycache = None if args.no_bytecode_cache else tmp
        for lib in ("pbj", "google"):
            run_once(lib, args.engine, pycache)  # writes the bytecode cache and pbj's schema cache
            counts[lib] = count_once(lib, args.engine, pycache)
            if counts[lib] is None:
                return
    print(f"CPython {sys.version.split()[0]} on {platform.machine()} {platform.system()}; instructions (callgrind), "
          f"one fresh process each, pbj engine {args.engine or 'default'}, pbj's schema cache {args.schema_cache}")
    print(f"{'phase':<14}{'pbj':>16}{'google':>16}{'ratio':>9}")
    for phase in PHASES:
        p, g = counts["pbj"][phase], counts["google"][phase]
        print(f"{phase:<14}{p:>16,}{g:>16,}{p / max(g, 1):>9.2f}")
    p, g = (sum(counts[lib].values()) for lib in ("pbj", "google"))
    print(f"{'total':<14}{p:>16,}{g:>16,}{p / g:>9.2f}")


if __name__ == "__main__":
    main()
