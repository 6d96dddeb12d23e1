"""Reports of a benchmark run: ratios and goals (:func:`summarize`), Markdown tables
(:func:`markdown`) and a figure (:func:`plot`), all from the run's JSON document.

Times are the thread's CPU time (:mod:`pbj.bench.timing`); a cell shows the best run and, in
brackets, the median; ratios are of the best runs, with the ratio of the medians in brackets.
"""

from __future__ import annotations

from typing import Any

__all__ = ["summarize", "markdown", "plot", "all_bytes_equal", "library_label", "versions_line", "machine_line",
           "timing_line", "PURE_PYTHON_PEERS", "PBJ_LIBRARIES", "TIME_TARGETS"]

#: The peers written in Python (Google's upb backend is C).
PURE_PYTHON_PEERS = ("google-python", "pure-protobuf", "betterproto2")
#: Hot-message operations compared across libraries.
HOT_OPS = ("encode", "encode_fresh", "decode", "decode_read")
#: Block operations compared across libraries: (label, pbj cell, Google cell).


def _median(lib: dict | None, *path: str) -> float | None:
    return _stat(lib, "median_us", *path)


def _minimum(lib: dict | None, *path: str) -> float | None:
    return _stat(lib, "min_us", *path)


def _stat(lib: dict | None, key: str, *path: str) -> float | None:
    node: Any = lib
    for step in path:
        if not isinstance(node, dict) or step not in node:
            return None
        node = node[step]
    return node.get(key) if isinstance(node, dict) else None


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def _available(results: dict, name: str) -> dict | None:
    lib = results.get("libraries", {}).get(name)
    return lib if lib and lib.get("available") else None


#: pbj's libraries in a run: the engine ``pbj`` picked (native when built) and the pure-Python one.
PBJ_LIBRARIES = ("pbj", "pbj-python")
#: Block comparisons: (label, pbj cell, other library's cell).
PBJ_VS = (("decode", "decode", "decode"), ("decode_read", "decode_read", "decode_read"),
          ("encode_fresh", "forward_fresh", "encode_fresh"), ("reverse_fresh", "reverse_fresh", "encode_fresh"),
          ("encode_cached", "forward_cached", "encode_cached"))


def _block_libs(results: dict) -> list[str]:
    return [n for n, lib in results.get("libraries", {}).items()
            if lib.get("available") and isinstance(lib.get("block"), dict)]


def _pbj_libs(results: dict) -> list[str]:
    return [n for n in PBJ_LIBRARIES if _available(results, n)]


def summarize(results: dict) -> dict:
    """Ratios and goals of a run, for each of pbj's engines that ran (``pbj``, ``pbj-python``).

    Every ratio is of the best runs (the minimum of the thread CPU times: the figure least touched
    by other jobs) with the ratio of the medians beside it under a ``_median`` key.

    Returns:
        ``{"reverse_vs_forward": {pbj lib: {target: {"fresh", "cached", "fresh_median", "cached_median"}}}``
        (reverse / forward), ``"vs_upb": {pbj lib: {target: {op: pbj / upb, op + "_median": ...}}}``,
        ``"hot_speedup": {pbj lib: {peer: {op: peer / pbj, ...}}}``, ``"block_speedup": {pbj lib: {peer:
        {target: {op: peer / pbj}}}}``, ``"checksums_equal": {library: bool}`` (every block reader read pbj's
        checksum), ``"goals": [{"goal", "value", "unit", "met"}]}``.
    """
    libs = results["libraries"]
    out: dict = {"reverse_vs_forward": {}, "vs_upb": {}, "hot_speedup": {}, "block_speedup": {},
                 "checksums_equal": {}, "goals": []}
    mine = _pbj_libs(results)
    reference = (libs.get(mine[0]) or {}).get("block") if mine else None
    for name in _block_libs(results):
        if reference and name != mine[0]:
            blocks = libs[name]["block"]
            out["checksums_equal"][name] = all(blocks[t]["checksum"] == reference[t]["checksum"]
                                               for t in blocks if t in reference)
    for me in mine:
        blocks = libs[me].get("block") if isinstance(libs[me].get("block"), dict) else {}
        rv = out["reverse_vs_forward"][me] = {}
        for target, r in blocks.items():
            cells = r["cells"]
            ratios = {}
            for mode in ("fresh", "cached"):
                ratios[mode] = _ratio(_minimum(cells, f"reverse_{mode}"), _minimum(cells, f"forward_{mode}"))
                ratios[f"{mode}_median"] = _ratio(_median(cells, f"reverse_{mode}"), _median(cells, f"forward_{mode}"))
            rv[target] = ratios
        hot = (libs[me].get("hot") or {}).get("ops") or {}
        out["hot_speedup"][me] = {}
        out["block_speedup"][me] = {}
        for name, lib in libs.items():
            if name in PBJ_LIBRARIES or not lib.get("available"):
                continue
            theirs = (lib.get("hot") or {}).get("ops")
            if theirs and hot:
                out["hot_speedup"][me][name] = {
                    **{op: _ratio(_minimum(theirs, op), _minimum(hot, op)) for op in HOT_OPS},
                    **{f"{op}_median": _ratio(_median(theirs, op), _median(hot, op)) for op in HOT_OPS}}
            if isinstance(lib.get("block"), dict):
                out["block_speedup"][me][name] = {
                    t: {label: _ratio(_minimum(lib["block"][t]["cells"], g), _minimum(blocks[t]["cells"], p))
                        for label, p, g in PBJ_VS}
                    for t in blocks if t in lib["block"] and lib["block"][t]["cells"]}
        upb = _available(results, "google-upb")
        if upb and isinstance(upb.get("block"), dict):
            out["vs_upb"][me] = {
                t: {**{label: _ratio(_minimum(blocks[t]["cells"], p), _minimum(upb["block"][t]["cells"], g))
                       for label, p, g in PBJ_VS},
                    **{f"{label}_median": _ratio(_median(blocks[t]["cells"], p), _median(upb["block"][t]["cells"], g))
                       for label, p, g in PBJ_VS}}
                for t in blocks if t in upb["block"]}
    out["goals"] = _goals(results, out)
    return out


#: The native engine's goals, as ratios to upb's time (goals counted in instructions,
#: ``pbj bench --instructions``; these are the same ratios on the thread CPU clock).
TIME_TARGETS = (("hot message: decode + read every field", "hot", "decode_read", "decode_read", 0.4),
                ("hot message: encode, sizes cached", "hot", "encode", "encode", 1.0),
                ("hot message: fresh encode, reverse writer", "hot", "reverse_fresh", "encode_fresh", 1.0),
                ("hot message: fresh encode, forward writer", "hot", "encode_fresh", "encode_fresh", 1.5),
                ("whole block: fresh encode, reverse writer", "BLOCK/all", "reverse_fresh", "encode_fresh", 1.5),
                ("whole block: decode + walk", "BLOCK/all", "decode_read", "decode_read", 0.6))


def _goals(results: dict, summary: dict) -> list[dict]:
    libs = results["libraries"]
    upb, me = _available(results, "google-upb"), libs.get("pbj")
    goals: list[dict] = []
    if not upb or not me or not me.get("available"):
        return goals
    for goal, where, mine, theirs, limit in TIME_TARGETS:
        if where == "hot":
            v = _ratio(_minimum((me.get("hot") or {}).get("ops"), mine), _minimum((upb.get("hot") or {}).get("ops"),
                                                                                    theirs))
        else:
            v = _ratio(_minimum(((me.get("block") or {}).get(where) or {}).get("cells"), mine),
                       _minimum(((upb.get("block") or {}).get(where) or {}).get("cells"), theirs))
        if v is not None:
            goals.append({"goal": f"{goal} <= {limit:g}x upb ({me.get('backend')} engine)", "value": v,
                          "unit": "x upb's CPU time (best runs)", "met": v <= limit})
    return goals


def all_bytes_equal(results: dict) -> bool:
    """True when every library that ran wrote pbj's bytes (hot message and block batches), or, for a peer
    that writes fields in another order, the same message (``same_message``)."""
    for lib in results.get("libraries", {}).values():
        if not lib.get("available"):
            continue
        hot = lib.get("hot")
        if hot and not (hot["bytes_equal"] and hot["roundtrip_equal"]):
            return False
        block = lib.get("block")
        if isinstance(block, dict) and not all(all(ok or (r.get("same_message") or {}).get(en)
                                                   for en, ok in r["bytes_equal"].items()) for r in block.values()):
            return False
    return True


# ------------------------------------------------------------------ formatting

def _num(us: float | None) -> str:
    if us is None:
        return "n/a"
    if us >= 100:
        return f"{us:,.0f}"
    if us >= 10:
        return f"{us:.1f}"
    return f"{us:.2f}"


def _spread(s: dict | None) -> str:
    """A cell as ``min [median]`` (µs): the best run first, the figure to compare."""
    if not s:
        return "n/a"
    return f"{_num(s['min_us'])} [{_num(s['median_us'])}]"


def _x(r: float | None) -> str:
    return "n/a" if r is None else f"{r:.2f}" if r < 10 else f"{r:.0f}"


def _xx(best: float | None, median: float | None) -> str:
    """A ratio of the best runs, with the ratio of the medians in brackets."""
    return "n/a" if best is None else f"{_x(best)} [{_x(median)}]"


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return lines


def _batch_label(results: dict, target: str) -> str:
    d = results["targets"][target]
    kind, which = target.split("/")
    if kind == "BLOCK":
        return f"whole block ({d['items']:,} items)" if which == "all" else f"block, first {d['items']:,} items"
    return f"{kind}, {'first' if which == 'first' else 'all'} {d['items']:,}"


def _kib(results: dict, target: str) -> str:
    return f"{results['targets'][target]['bytes'] / 1024:,.0f}"


def library_label(name: str, lib: dict) -> str:
    """A library's column name: ``pbj native``, ``pbj python``, ``upb``, ``google-python``, ``betterproto2`` ..."""
    if name in PBJ_LIBRARIES:
        return f"pbj {lib.get('backend') or 'python'}"
    return {"google-upb": "upb"}.get(name, name)


def versions_line(libs: dict) -> str:
    """``name version`` of every library that ran (pbj's engines once, with the engines named)."""
    parts = []
    engines = [lib.get("backend") for n, lib in libs.items() if n in PBJ_LIBRARIES and lib.get("available")]
    if engines:
        version = next(lib["version"] for n, lib in libs.items() if n in PBJ_LIBRARIES and lib.get("available"))
        parts.append(f"pbj {version} ({' and '.join(str(e) for e in engines)} engine{'s' if len(engines) > 1 else ''})")
    for n, lib in libs.items():
        if n in PBJ_LIBRARIES or not lib.get("available"):
            continue
        extra = f" (compiler {lib['compiler_version']})" if lib.get("compiler_version") else ""
        parts.append(f"{n} {lib['version']}{extra}")
    return ", ".join(parts)


def machine_line(results: dict) -> str:
    """Where and when a run was made: CPU model and cores, platform, Python, load average, date, duration."""
    m = results["machine"]
    return (f"Machine: {m['cpu_model']}, {m['cpus']} cores, {m['platform']}; {m['python_implementation']} "
            f"{m['python']}; load average (1, 5, 15 min) {m.get('load_average_start')} at start, "
            f"{m.get('load_average_end')} at end. Run {results['created']}, {results.get('elapsed_s', 0):.0f} s.")


def timing_line(cfg: dict) -> str:
    """How the cells were timed (the thread's CPU clock, best run and median)."""
    t = cfg["timing"]
    return ("Timing: the thread's CPU time (`time.thread_time_ns`), µs, best run [median] of >= "
            f"{t['runs']} runs after {t['warmup']} warm-up round(s); ratios are of the best runs [of the medians]"
            + (" — QUICK RUN, figures not meaningful" if cfg.get("quick") else "") + ".")


def markdown(results: dict, header: bool = True, goals: bool = False) -> str:
    """The run as Markdown tables: machine, versions, reverse vs forward (each pbj engine), decode, decode +
    read, the garbage collector, encode (fresh, sizes cached) for every library on the block, the hot message
    for every library, pbj's speed-ups, the goals (only when ``goals``: the documentation keeps the
    measurements, not the project's targets), and notes. Times are thread CPU time (see :mod:`pbj.bench.timing`)."""
    cfg = results["config"]
    libs = results["libraries"]
    summary = summarize(results)  # again: a JSON of an older run may hold an older summary's shape
    out: list[str] = []
    if header:
        out += ["# pbj bench", ""]
    out += [machine_line(results), "", f"Libraries: {versions_line(libs)}.", "",
            f"Block: {results['block']['source']}, {results['block']['bytes']:,} bytes, "
            f"{results['block']['items']:,} items. {timing_line(cfg)}", ""]
    slow = cfg.get("slow_peers") or {}
    block_libs = _block_libs(results)
    mine = [n for n in _pbj_libs(results) if n in block_libs]
    targets = list(results["targets"]) if block_libs else []
    label = {n: library_label(n, libs[n]) for n in libs}
    upb = "google-upb" if "google-upb" in block_libs else None

    def c(name: str, target: str, op: str) -> dict | None:
        return ((libs[name]["block"].get(target) or {}).get("cells") or {}).get(op)

    if mine and targets:
        out += ["### Reverse vs forward writer (pbj), µs per batch", ""]
        rows = []
        for me in mine:
            rv = summary["reverse_vs_forward"].get(me, {})
            for t in targets:
                r = rv.get(t, {})
                rows.append([_batch_label(results, t), label[me], _kib(results, t), _spread(c(me, t, "forward_fresh")),
                             _spread(c(me, t, "reverse_fresh")), _xx(r.get("fresh"), r.get("fresh_median")),
                             _spread(c(me, t, "forward_cached")), _spread(c(me, t, "reverse_cached")),
                             _xx(r.get("cached"), r.get("cached_median"))])
        out += _table(["batch", "engine", "KiB", "forward, fresh", "reverse, fresh", "rev/fwd",
                       "forward, sizes cached", "reverse, sizes cached", "rev/fwd"], rows)
        out += ["", "fresh: objects just decoded (a new copy per run, decoded outside the timed region); "
                "sizes cached: the same objects encoded once before timing. rev/fwd < 1: reverse is faster.", ""]

        def per_library(title: str, op: str, note: str, mine_op: str | None = None) -> None:
            nonlocal out
            head = ["batch", *(label[n] for n in block_libs)]
            if upb:
                head += [f"{label[me]} / upb" for me in mine]
            rows = []
            for t in targets:
                row = [_batch_label(results, t)]
                for n in block_libs:
                    row.append(_spread(c(n, t, (mine_op or op) if n in PBJ_LIBRARIES else op)))
                if upb:
                    key = {"decode": "decode", "decode_read": "decode_read", "encode_fresh": "encode_fresh",
                           "encode_cached": "encode_cached"}[op]
                    for me in mine:
                        v = summary["vs_upb"].get(me, {}).get(t, {})
                        row.append(_xx(v.get(key), v.get(f"{key}_median")))
                rows.append(row)
            out += [f"### {title}, µs per batch", "", *_table(head, rows), "", note, ""]

        peers_note = ""
        if slow:
            peers_note = (f" {', '.join(p for p in slow if p in block_libs)}: whole block only, "
                          f"{next(iter(slow.values()))['timing']['runs']} runs (each takes seconds; `--all-targets` "
                          "runs them on every batch).")
        per_library("Decode + read every field", "decode_read",
                    "Decode, then read every field of every message (the generic readers of `pbj/bench/readers.py`"
                    " and `pbj/bench/peers/betterproto_gen.py`); every library read pbj's checksum: "
                    + (", ".join(f"{label[n]} {'yes' if ok else 'NO'}" for n, ok in summary["checksums_equal"].items())
                       or "n/a") + ". upb decodes lazily (Python objects are made when a field is read): this is "
                    "the figure to compare with it." + peers_note)
        per_library("Decode", "decode", "Decode alone (upb's builds only its C representation)." + peers_note)
        per_library("Encode, fresh (objects just decoded), forward writer", "encode_fresh",
                    "pbj's forward writer (`pbj.encode`); each library's own encode (upb and google-python: "
                    "`SerializeToString()`, betterproto2: `bytes(message)`)." + peers_note, mine_op="forward_fresh")
        per_library("Encode, sizes cached (objects encoded before)", "encode_cached",
                    "pbj keeps each message's size on the frozen object; upb and betterproto2 cache none."
                    + peers_note, mine_op="forward_cached")
        gc_libs = [n for n in block_libs if any(c(n, t, "decode_gc") for t in targets)]
        if gc_libs:
            rows = []
            for t in targets:
                row = [_batch_label(results, t)]
                for n in gc_libs:
                    on, off = c(n, t, "decode_gc"), c(n, t, "decode")
                    row += [_spread(on), _x(_ratio(_minimum({"x": on}, "x"), _minimum({"x": off}, "x")))]
                rows.append(row)
            head = ["batch", *(h for n in gc_libs for h in (f"{label[n]}, gc on", "on/off"))]
            out += ["### Decode with the garbage collector on, µs per batch", "", *_table(head, rows)]
            out += ["", "Every other cell runs with the cyclic garbage collector off (as timeit does); applications "
                    "run with it on. on/off: best run with it on / best run with it off.", ""]

    hot = (libs.get("pbj") or {}).get("hot") or {}
    out += [f"### Hot message ({hot.get('size', '?')}-byte HAPI-like TransactionBody), µs per message", ""]
    rows = []
    for name, lib in libs.items():
        if not lib.get("available"):
            rows.append([name, "n/a", "n/a", *(["not run"] * 4)])
            continue
        h = lib.get("hot") or {}
        ops = h.get("ops") or {}
        same = "yes" if h.get("bytes_equal") and h.get("roundtrip_equal") else "NO"
        rows.append([label[name], str(lib.get("version")), same, *(_spread(ops.get(op)) for op in HOT_OPS)])
        if "reverse" in ops:
            rows.append([f"{label[name]}, reverse writer", "", "yes" if h.get("bytes_equal") else "NO",
                         _spread(ops.get("reverse")), _spread(ops.get("reverse_fresh")), "", ""])
        if "plain" in ops:
            rows.append([f"{label[name]}, plain SerializeToString", "", "(map order varies)",
                         _spread(ops.get("plain")), _spread(ops.get("plain_fresh")), "", ""])
    out += _table(["library", "version", "bytes = pbj", "encode", "encode fresh", "decode", "decode+read"], rows)
    out += ["", "encode: the same object encoded again and again (a library that caches sizes uses them); "
            "encode fresh: copies just decoded; Google's encode is SerializeToString(deterministic=True), "
            "which gives pbj's bytes for these messages (none holds a map of two or more entries, where upb "
            "orders keys otherwise: docs/usage-guide.md, \"Which bytes\").", ""]
    speed_rows = [[label[me], label[n], *(_xx(s.get(op), s.get(f"{op}_median")) for op in HOT_OPS)]
                  for me, peers in summary["hot_speedup"].items() for n, s in peers.items()]
    if speed_rows:
        out += ["### pbj's speed-up on the hot message (their time / pbj's time; > 1: pbj is faster)", ""]
        out += _table(["pbj", "vs", *HOT_OPS], speed_rows)
        out += [""]
    # the goals of this run's figures, else those a results document was saved with
    goal_list = summary["goals"] or (results.get("summary") or {}).get("goals") or []
    if goals and goal_list:
        out += ["### Performance targets of the project (CPU time)", ""]
        rows = [[g["goal"], f"{g['value']:.2f} {g['unit']}", "met" if g["met"] else "**not met**"]
                for g in goal_list]
        out += _table(["goal", "measured", ""], rows)
        out += [""]
    notes = []
    for name, lib in libs.items():
        if not lib.get("available"):
            notes.append(f"- {name}: {lib.get('reason')}")
        elif isinstance(lib.get("block"), str):
            notes.append(f"- {name}: {lib['block']}")
    if not all_bytes_equal(results):
        notes.append("- **Some library's bytes differed from pbj's**: see the JSON (`bytes_equal`).")
    if notes:
        out += ["Notes:", "", *notes, ""]
    return "\n".join(out).rstrip() + "\n"


def plot(results: dict, path: str) -> None:
    """Draw the run into a PNG: reverse/forward ratios, the hot message per library, block batches vs Google.

    Raises:
        ImportError: matplotlib is not installed.
    """
    # matplotlib is the bench extra's (mypy: [[tool.mypy.overrides]] in pyproject.toml)
    import matplotlib  # pyright: ignore[reportMissingImports]

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # pyright: ignore[reportMissingImports]

    summary = summarize(results)
    libs = results["libraries"]
    fig, axes = plt.subplots(1, 3, figsize=(19, 6))

    ax = axes[0]
    rv = summary["reverse_vs_forward"].get("pbj", {})
    names = list(rv)
    xs = range(len(names))
    ax.bar([x - 0.2 for x in xs], [rv[n]["fresh"] or 0 for n in names], 0.4, label="fresh")
    ax.bar([x + 0.2 for x in xs], [rv[n]["cached"] or 0 for n in names], 0.4, label="sizes cached")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(list(xs), [n.replace("/", " ") for n in names], fontsize=7, rotation=30, ha="right")
    ax.set_ylabel("reverse time / forward time")
    ax.set_title("pbj: reverse vs forward writer (< 1: reverse faster)")
    ax.legend()

    ax = axes[1]
    peers = [n for n, lib in libs.items() if lib.get("available") and (lib.get("hot") or {}).get("ops")]
    width = 0.8 / max(1, len(peers))
    for i, name in enumerate(peers):
        ops = libs[name]["hot"]["ops"]
        ax.bar([j + i * width - 0.4 + width / 2 for j in range(len(HOT_OPS))],
               [ops[op]["median_us"] for op in HOT_OPS], width, label=name)
    ax.set_yscale("log")
    ax.set_xticks(range(len(HOT_OPS)), HOT_OPS)
    ax.set_ylabel("µs per message (log)")
    ax.set_title("hot message, every library")
    ax.legend(fontsize=8)

    ax = axes[2]
    blocks = (libs["pbj"].get("block") or {})
    targets = [t for t in blocks if t.endswith("/all")]
    series = [("pbj", "decode_read", "pbj decode+read"), ("pbj", "forward_fresh", "pbj encode fresh")]
    for g in ("pbj-python", "google-upb", "google-python", "betterproto2"):
        if _available(results, g) and isinstance(libs[g].get("block"), dict):
            op = "forward_fresh" if g == "pbj-python" else "encode_fresh"
            series += [(g, "decode_read", f"{g} decode+read"), (g, op, f"{g} encode fresh")]
    width = 0.8 / max(1, len(series))
    for i, (lib, op, label) in enumerate(series):
        vals = [(_median(libs[lib]["block"].get(t, {}).get("cells"), op) or 0) / 1000 for t in targets]
        ax.bar([j + i * width - 0.4 + width / 2 for j in range(len(targets))], vals, width, label=label)
    ax.set_yscale("log")
    ax.set_xticks(range(len(targets)), [t.split("/")[0] for t in targets], fontsize=7, rotation=30, ha="right")
    ax.set_ylabel("ms of CPU time per batch, median (log)")
    ax.set_title("all items of each kind, and the whole block")
    ax.legend(fontsize=7)

    m = results["machine"]
    fig.suptitle(f"pbj bench — {m['cpu_model']}, {m['cpus']} CPUs, Python {m['python']}, {results['created']}",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
