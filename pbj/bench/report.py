"""Reports of a benchmark run: ratios and goals (:func:`summarize`), Markdown tables
(:func:`markdown`) and a figure (:func:`plot`), all from the run's JSON document."""

from __future__ import annotations

from typing import Any

__all__ = ["summarize", "markdown", "plot", "all_bytes_equal", "GOAL_SPEEDUP", "PURE_PYTHON_PEERS"]

#: The issue's target: pbj at least this many times faster than every pure-Python peer.
GOAL_SPEEDUP = 10.0
#: The peers written in Python (Google's upb backend is C).
PURE_PYTHON_PEERS = ("google-python", "pure-protobuf", "betterproto2")
#: Hot-message operations compared across libraries.
HOT_OPS = ("encode", "encode_fresh", "decode", "decode_read")
#: Block operations compared across libraries: (label, pbj cell, Google cell).
BLOCK_COMPARE = (("decode", "decode", "decode"), ("decode_read", "decode_read", "decode_read"),
                 ("encode_fresh", "forward_fresh", "encode_fresh"),
                 ("encode_cached", "forward_cached", "encode_cached"))


def _median(lib: dict | None, *path: str) -> float | None:
    node: Any = lib
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node.get("median_us") if isinstance(node, dict) else None


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def _available(results: dict, name: str) -> dict | None:
    lib = results.get("libraries", {}).get(name)
    return lib if lib and lib.get("available") else None


def summarize(results: dict) -> dict:
    """Ratios and goals of a run.

    Returns:
        ``{"reverse_vs_forward": {target: {"fresh", "cached", "fresh_best", "cached_best"}}`` (reverse µs
        / forward µs, of the medians and of the best runs),
        ``"vs_upb": {target: {op: pbj µs / upb µs}}``, ``"hot_speedup": {peer: {op: peer µs / pbj µs}}``,
        ``"block_speedup": {peer: {target: {op: peer µs / pbj µs}}}``, ``"checksums_equal": {peer: bool}``,
        ``"goals": [{"goal", "value", "unit", "met"}]}``.
    """
    pbj = results["libraries"]["pbj"]
    blocks = pbj.get("block") or {}
    out: dict = {"reverse_vs_forward": {}, "vs_upb": {}, "hot_speedup": {}, "block_speedup": {},
                 "checksums_equal": {}, "goals": []}
    for target, r in blocks.items():
        cells = r["cells"]
        ratios = {}
        for mode in ("fresh", "cached"):
            rev, fwd = cells.get(f"reverse_{mode}") or {}, cells.get(f"forward_{mode}") or {}
            ratios[mode] = _ratio(rev.get("median_us"), fwd.get("median_us"))
            ratios[f"{mode}_best"] = _ratio(rev.get("min_us"), fwd.get("min_us"))
        out["reverse_vs_forward"][target] = ratios
    for name, lib in results["libraries"].items():
        if name == "pbj" or not lib.get("available"):
            continue
        if lib.get("hot", {}).get("ops"):
            out["hot_speedup"][name] = {op: _ratio(_median(lib["hot"]["ops"], op), _median(pbj["hot"]["ops"], op))
                                        for op in HOT_OPS}
        if isinstance(lib.get("block"), dict):
            out["checksums_equal"][name] = all(
                lib["block"][t]["checksum"] == blocks[t]["checksum"] for t in blocks if t in lib["block"])
            out["block_speedup"][name] = {
                t: {label: _ratio(_median(lib["block"][t]["cells"], g), _median(blocks[t]["cells"], p))
                    for label, p, g in BLOCK_COMPARE}
                for t in blocks if t in lib["block"]}
    upb = out["block_speedup"].get("google-upb", {})
    out["vs_upb"] = {t: {op: (1 / v if v else None) for op, v in ops.items()} for t, ops in upb.items()}

    goals = out["goals"]
    for peer in PURE_PYTHON_PEERS:
        speed = out["hot_speedup"].get(peer)
        if speed and all(v is not None for v in speed.values()):
            worst = min(speed, key=speed.get)
            goals.append({"goal": f"pbj >= {GOAL_SPEEDUP:g}x faster than {peer}, every op, hot message",
                          "value": speed[worst], "unit": f"x (slowest gain: {worst})",
                          "met": speed[worst] >= GOAL_SPEEDUP})
        bs = out["block_speedup"].get(peer)
        if bs:
            pairs = [(v, f"{t} {op}") for t, ops in bs.items() for op, v in ops.items() if v is not None]
            if pairs:
                v, where = min(pairs)
                goals.append({"goal": f"pbj >= {GOAL_SPEEDUP:g}x faster than {peer}, every op, block batches",
                              "value": v, "unit": f"x (slowest gain: {where})", "met": v >= GOAL_SPEEDUP})
    upb_hot = out["hot_speedup"].get("google-upb", {}).get("decode_read")
    if upb_hot:
        goals.append({"goal": "decode + read every field no slower than upb, hot message",
                      "value": 1 / upb_hot, "unit": "x upb's time", "met": 1 / upb_hot <= 1.0})
    for t in ("BLOCK/all",):
        v = out["vs_upb"].get(t, {}).get("decode_read")
        if v:
            goals.append({"goal": "decode + read every field no slower than upb, whole block",
                          "value": v, "unit": "x upb's time", "met": v <= 1.0})
        v = out["vs_upb"].get(t, {}).get("encode_fresh")
        if v:
            goals.append({"goal": "encode the whole block (just decoded) within 10x of upb",
                          "value": v, "unit": "x upb's time", "met": v <= 10.0})
        v = out["vs_upb"].get(t, {}).get("encode_cached")
        if v:
            goals.append({"goal": "encode the whole block (sizes cached) within 10x of upb",
                          "value": v, "unit": "x upb's time", "met": v <= 10.0})
    return out


def all_bytes_equal(results: dict) -> bool:
    """True when every library that ran wrote pbj's bytes (hot message and block batches)."""
    for lib in results.get("libraries", {}).values():
        if not lib.get("available"):
            continue
        hot = lib.get("hot")
        if hot and not (hot["bytes_equal"] and hot["roundtrip_equal"]):
            return False
        block = lib.get("block")
        if isinstance(block, dict) and not all(all(r["bytes_equal"].values()) for r in block.values()):
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
    if not s:
        return "n/a"
    return f"{_num(s['median_us'])} [{_num(s['min_us'])}, {_num(s['max_us'])}]"


def _x(r: float | None) -> str:
    return "n/a" if r is None else f"{r:.2f}" if r < 10 else f"{r:.0f}"


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


def markdown(results: dict, header: bool = True, goals: bool = False) -> str:
    """The run as Markdown tables: machine, reverse vs forward, decode and encode against Google's
    protobuf, the hot message against every peer, pbj's speed-ups, the goals (unless ``goals`` is
    false: the documentation keeps the measurements, not the project's targets), and notes."""
    m = results["machine"]
    cfg = results["config"]
    libs = results["libraries"]
    pbj = libs["pbj"]
    summary = results.get("summary") or summarize(results)
    out: list[str] = []
    if header:
        out += ["# pbj bench", ""]
    load = f"{m.get('load_average_start')} at start, {m.get('load_average_end')} at end"
    versions = ", ".join(f"{n} {lib['version']}" for n, lib in libs.items() if lib.get("available"))
    versions += f"; pbj engine: {m.get('pbj_engine', 'python')}"
    out += [f"Machine: {m['cpu_model']}, {m['cpus']} CPUs, {m['platform']}; "
            f"{m['python_implementation']} {m['python']}; load average (1, 5, 15 min) {load}. "
            f"Run {results['created']}, {results.get('elapsed_s', 0):.0f} s.",
            "",
            f"Libraries: {versions}.",
            "",
            f"Block: {results['block']['source']}, {results['block']['bytes']:,} bytes, "
            f"{results['block']['items']:,} items. Timing: median [min, max] of "
            f">= {cfg['timing']['runs']} runs after {cfg['timing']['warmup']} warm-up round(s)"
            + (" — QUICK RUN, figures not meaningful" if cfg.get("quick") else "") + ".", ""]

    blocks = pbj.get("block") or {}
    if blocks:
        out += ["## Reverse vs forward writer (pbj), µs per batch", ""]
        rows = []
        for t, r in blocks.items():
            c = r["cells"]
            rv = summary["reverse_vs_forward"].get(t, {})
            rows.append([_batch_label(results, t), _kib(results, t), _spread(c.get("forward_fresh")),
                         _spread(c.get("reverse_fresh")), f"{_x(rv.get('fresh'))} ({_x(rv.get('fresh_best'))})",
                         _spread(c.get("forward_cached")), _spread(c.get("reverse_cached")),
                         f"{_x(rv.get('cached'))} ({_x(rv.get('cached_best'))})"])
        out += _table(["batch", "KiB", "forward, fresh", "reverse, fresh", "rev/fwd", "forward, sizes cached",
                       "reverse, sizes cached", "rev/fwd"], rows)
        out += ["", "fresh: objects just decoded (a new copy per run, decoded outside the timed region); "
                "sizes cached: the same objects encoded once before timing. rev/fwd: ratio of the medians "
                "(of the best runs); < 1: reverse is faster.", ""]

        google = [(n, libs[n]) for n in ("google-upb", "google-python")
                  if _available(results, n) and isinstance(libs[n].get("block"), dict)]
        gnames = [n.replace("google-", "") for n, _ in google]
        out += ["## Decode, and decode + read every field, µs per batch (median)", ""]
        rows = []
        for t, r in blocks.items():
            c = r["cells"]
            row = [_batch_label(results, t), _num(_median(c, "decode"))]
            row += [_num(_median(lib["block"].get(t, {}).get("cells"), "decode")) for _, lib in google]
            row += [_num(_median(c, "decode_read"))]
            row += [_num(_median(lib["block"].get(t, {}).get("cells"), "decode_read")) for _, lib in google]
            row += [_x(summary["vs_upb"].get(t, {}).get(op)) for op in ("decode", "decode_read")]
            rows.append(row)
        out += _table(["batch", "pbj decode", *(f"{g} decode" for g in gnames), "pbj decode+read",
                       *(f"{g} decode+read" for g in gnames), "pbj/upb decode", "pbj/upb decode+read"], rows)
        out += ["", "Google's upb decodes lazily (Python objects are made when a field is read), so compare "
                "decode+read. The reader walks every field generically on both sides (pbj: pbj.schema.info, "
                "Google: DESCRIPTOR); both give the same checksum: "
                + ", ".join(f"{n} {'yes' if ok else 'NO'}" for n, ok in summary["checksums_equal"].items())
                + ".", ""]
        out += ["## Decode with the garbage collector on, µs per batch (median)", ""]
        rows = []
        for t, r in blocks.items():
            c = r["cells"]
            row = [_batch_label(results, t), _num(_median(c, "decode")), _num(_median(c, "decode_gc")),
                   _x(_ratio(_median(c, "decode_gc"), _median(c, "decode")))]
            row += [_num(_median(lib["block"].get(t, {}).get("cells"), "decode_gc")) for _, lib in google]
            rows.append(row)
        out += _table(["batch", "pbj, gc off", "pbj, gc on", "on/off", *(f"{g}, gc on" for g in gnames)], rows)
        out += ["", "Every other cell runs with the cyclic garbage collector off (as timeit does); applications "
                "run with it on.", ""]
        out += ["## Encode, µs per batch (median)", ""]
        rows = []
        for t, r in blocks.items():
            c = r["cells"]
            row = [_batch_label(results, t), _num(_median(c, "forward_fresh")), _num(_median(c, "reverse_fresh"))]
            row += [_num(_median(lib["block"].get(t, {}).get("cells"), "encode_fresh")) for _, lib in google]
            row += [_num(_median(c, "forward_cached"))]
            row += [_num(_median(lib["block"].get(t, {}).get("cells"), "encode_cached")) for _, lib in google]
            row += [_x(summary["vs_upb"].get(t, {}).get(op)) for op in ("encode_fresh", "encode_cached")]
            rows.append(row)
        out += _table(["batch", "pbj forward, fresh", "pbj reverse, fresh", *(f"{g}, fresh" for g in gnames),
                       "pbj forward, cached", *(f"{g}, cached" for g in gnames), "pbj/upb fresh",
                       "pbj/upb cached"], rows)
        out += [""]

    hot = pbj.get("hot") or {}
    out += [f"## Hot message ({hot.get('size', '?')}-byte HAPI-like TransactionBody), µs per message, "
            "median [min, max]", ""]
    rows = []
    for name, lib in libs.items():
        if not lib.get("available"):
            rows.append([name, "n/a", "n/a", *(["not run"] * 4)])
            continue
        h = lib.get("hot") or {}
        ops = h.get("ops") or {}
        same = "yes" if h.get("bytes_equal") and h.get("roundtrip_equal") else "NO"
        label = f"{name} ({lib['backend']})" if lib.get("backend") and not name.endswith(lib["backend"]) else name
        rows.append([label, str(lib.get("version")), same, *(_spread(ops.get(op)) for op in HOT_OPS)])
        if "reverse" in ops:
            rows.append([f"{name}, reverse writer", "", "yes" if h.get("bytes_equal") else "NO",
                         _spread(ops.get("reverse")), _spread(ops.get("reverse_fresh")), "", ""])
        if "plain" in ops:
            rows.append([f"{name}, plain SerializeToString", "", "(map order varies)",
                         _spread(ops.get("plain")), _spread(ops.get("plain_fresh")), "", ""])
    out += _table(["library", "version", "bytes = pbj", "encode", "encode fresh", "decode", "decode+read"], rows)
    out += ["", "encode: the same object encoded again and again (a library that caches sizes uses them); "
            "encode fresh: copies just decoded; Google's encode is SerializeToString(deterministic=True), "
            "which gives pbj's bytes for these messages (none holds a map of two or more entries, where upb "
            "orders keys otherwise: docs/usage-guide.md, \"Which bytes\").", ""]
    if summary["hot_speedup"]:
        out += ["## pbj's speed-up (their time / pbj's time; > 1: pbj is faster)", ""]
        rows = [[n, *(_x(s.get(op)) for op in HOT_OPS)] for n, s in summary["hot_speedup"].items()]
        out += _table(["hot message vs", *HOT_OPS], rows)
        out += [""]
    if goals and summary["goals"]:
        out += ["## Performance targets of the project", ""]
        rows = [[g["goal"], f"{g['value']:.2f} {g['unit']}", "met" if g["met"] else "**not met**"]
                for g in summary["goals"]]
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

    summary = results.get("summary") or summarize(results)
    libs = results["libraries"]
    fig, axes = plt.subplots(1, 3, figsize=(19, 6))

    ax = axes[0]
    rv = summary["reverse_vs_forward"]
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
    for g in ("google-upb", "google-python"):
        if _available(results, g) and isinstance(libs[g].get("block"), dict):
            series += [(g, "decode_read", f"{g} decode+read"), (g, "encode_fresh", f"{g} encode fresh")]
    width = 0.8 / max(1, len(series))
    for i, (lib, op, label) in enumerate(series):
        vals = [(_median(libs[lib]["block"].get(t, {}).get("cells"), op) or 0) / 1000 for t in targets]
        ax.bar([j + i * width - 0.4 + width / 2 for j in range(len(targets))], vals, width, label=label)
    ax.set_yscale("log")
    ax.set_xticks(range(len(targets)), [t.split("/")[0] for t in targets], fontsize=7, rotation=30, ha="right")
    ax.set_ylabel("ms per batch (log)")
    ax.set_title("all items of each kind, and the whole block")
    ax.legend(fontsize=7)

    m = results["machine"]
    fig.suptitle(f"pbj bench — {m['cpu_model']}, {m['cpus']} CPUs, Python {m['python']}, {results['created']}",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
