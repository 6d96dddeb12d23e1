"""The ``pbj`` command line (also ``python -m pbj``).

Commands:

* ``pbj demo``: decode the real Hedera block that ships with pbj, encode it
  again with both writers and check the bytes (prints counts and timings).
* ``pbj decode (--descriptor-set F | --proto F... [-I DIR...]) --type NAME [--text] [FILE|-]``:
  decode a binary message and print it as ProtoJSON (``pbj.to_json``), or as
  an indented text form with ``--text``.
* ``pbj encode (--descriptor-set F | --proto F... [-I DIR...]) --type NAME [FILE|-]``:
  read a message as ProtoJSON (``pbj.from_json``) and write its binary
  encoding to stdout.
* ``pbj decode-raw [FILE|-]``: print the wire structure of a message without
  a schema, as ``protoc --decode_raw`` does.
* ``pbj bench [--quick] [--json F] [--plot F.png] ...``: the benchmarks of
  ``docs/performance.md`` (:mod:`pbj.bench`; peers from the ``bench`` extra).

User errors (a bad file, an unknown type, a malformed payload) print one line
``pbj: error: ...`` to stderr and exit with status 1 (2 for bad arguments).
"""

from __future__ import annotations

import argparse
import collections
import enum
import gzip
import sys
import time
from importlib import resources
from typing import Any

import pbj
from pbj import wire
from pbj.errors import PbjError
from pbj.schema import FrozenMap, OneOf, info

__all__ = ["main", "format_message", "format_raw", "walk_fields"]

BLOCK_FILE = "000000000000000000000000000000497558.blk.gz"
SCHEMA_FILE = "hapi-v0.55.0.binpb"
BLOCK_TYPE = "com.hedera.hapi.block.stream.Block"


class UserError(Exception):
    """A problem with the user's input: reported in one line, without a traceback."""


# ----------------------------------------------------------------- progress

class _Progress:
    """A text progress bar on stderr (redrawn in place on a terminal)."""

    def __init__(self, total: int, width: int = 30) -> None:
        self.total = total
        self.width = width
        self.done = 0
        self.tty = sys.stderr.isatty()
        self._last = -1

    def step(self, label: str, amount: int = 1) -> None:
        self.done = min(self.total, self.done + amount)
        filled = self.width * self.done // self.total
        if not self.tty and filled == self._last and self.done < self.total:
            return
        self._last = filled
        bar = "#" * filled + "." * (self.width - filled)
        line = f"[{bar}] {100 * self.done // self.total:3d}% {label}"
        if self.tty:
            sys.stderr.write(f"\r{line:<72}")
            if self.done >= self.total:
                sys.stderr.write("\n")
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


# ----------------------------------------------------------------- raw walk

def walk_fields(data: bytes, pos: int = 0, end: int | None = None) -> list[tuple[int, int, int, int, Any]]:
    """Split an encoded message into its top-level fields, with no schema.

    Args:
        data: the encoding.
        pos, end: the byte range to walk (default: all of ``data``).

    Returns:
        ``(field_number, wire_type, start, stop, value)`` per field, in order:
        ``start``/``stop`` delimit the whole field (tag included); ``value`` is
        the varint (``int``), the 8 or 4 raw bytes (I64/I32), the payload
        ``(begin, end)`` offsets (LEN), or the group body ``(begin, end)``
        offsets without the end tag (SGROUP).

    Raises:
        DecodeError: the bytes are not a valid sequence of fields (truncated,
            bad wire type, field number 0 …).
    """
    end = len(data) if end is None else end
    out = []
    try:
        while pos < end:
            start = pos
            tag, pos = wire.read_tag(data, pos)
            number, wt = tag >> 3, tag & 7
            if number == 0:
                raise pbj.DecodeError("field number 0 is not allowed", offset=start)
            if wt == wire.WIRE_VARINT:
                value, pos = wire.read_varint(data, pos)
            elif wt == wire.WIRE_I64:
                value, pos = data[pos:pos + 8], pos + 8
            elif wt == wire.WIRE_I32:
                value, pos = data[pos:pos + 4], pos + 4
            elif wt == wire.WIRE_LEN:
                n, pos = wire.read_varint(data, pos)
                value, pos = (pos, pos + n), pos + n
            elif wt == wire.WIRE_SGROUP:
                body = pos
                pos = wire.skip_field(data, pos, tag, end, 100)
                # The body ends before the end-group tag (same field number, wire type 4).
                value = (body, pos - len(wire.tag_bytes(number, wire.WIRE_EGROUP)))
            else:
                raise pbj.DecodeError(f"wire type {wt} cannot start a field", offset=start)
            if pos > end:
                raise pbj.DecodeError("truncated input: field runs past the end", offset=start)
            out.append((number, wt, start, pos, value))
    except IndexError:
        raise pbj.DecodeError("truncated input", offset=pos) from None
    except pbj.DecodeError as exc:
        if exc.offset is None:
            exc.offset = pos
        raise
    return out


def _printable(raw: bytes) -> bool:
    """Whether ``raw`` is UTF-8 text of printable characters (tabs, newlines allowed)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return text.replace("\n", "").replace("\t", "").isprintable()


def _quote(raw: bytes) -> str:
    """``raw`` as a double-quoted string with C escapes (as protoc prints bytes)."""
    out = []
    for b in raw:
        if b == 0x22:
            out.append('\\"')
        elif b == 0x5C:
            out.append("\\\\")
        elif b == 0x0A:
            out.append("\\n")
        elif 0x20 <= b < 0x7F:
            out.append(chr(b))
        else:
            out.append(f"\\{b:03o}")
    return '"' + "".join(out) + '"'


def _quote_text(text: str) -> str:
    out = []
    for ch in text:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\{ord(ch):03o}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def format_raw(data: bytes, *, indent: str = "  ", max_depth: int = 64) -> str:
    """The wire structure of ``data`` as text, like ``protoc --decode_raw``.

    Each field is ``number: value``: varints as unsigned integers, I64 and I32
    values as hex (``0x...``), LEN values as a nested ``number { ... }`` block
    when their payload parses as fields, otherwise as a quoted string; groups
    as ``number { ... }``.

    Raises:
        DecodeError: the top level is not a valid sequence of fields.
    """
    lines: list[str] = []
    _raw_lines(data, 0, len(data), 0, lines, indent, max_depth)
    return "\n".join(lines)


def _raw_lines(data: bytes, pos: int, end: int, depth: int, lines: list[str], indent: str,
               max_depth: int) -> None:
    pad = indent * depth
    for number, wt, _start, _stop, value in walk_fields(data, pos, end):
        if wt == wire.WIRE_VARINT:
            lines.append(f"{pad}{number}: {value}")
        elif wt == wire.WIRE_I64:
            lines.append(f"{pad}{number}: 0x{int.from_bytes(value, 'little'):016x}")
        elif wt == wire.WIRE_I32:
            lines.append(f"{pad}{number}: 0x{int.from_bytes(value, 'little'):08x}")
        else:
            begin, stop = value
            nested = None
            payload = data[begin:stop]
            if wt == wire.WIRE_LEN and _printable(payload):
                pass  # text reads better as a string, even if it happens to parse as fields
            elif depth < max_depth and stop > begin:
                try:
                    walk_fields(data, begin, stop)
                    nested = True
                except pbj.DecodeError:
                    nested = None
            if nested or wt == wire.WIRE_SGROUP:
                lines.append(f"{pad}{number} {{")
                try:
                    _raw_lines(data, begin, stop, depth + 1, lines, indent, max_depth)
                except pbj.DecodeError:
                    lines.append(f"{pad}{indent}{_quote(data[begin:stop])}")
                lines.append(f"{pad}}}")
            else:
                try:
                    text = _quote_text(payload.decode("utf-8"))
                except UnicodeDecodeError:
                    text = _quote(payload)
                lines.append(f"{pad}{number}: {text}")


# ----------------------------------------------------------------- text form

def _scalar_text(value: Any) -> str:
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _quote_text(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return _quote(bytes(value))
    return repr(value)


def format_message(obj: Any, *, indent: str = "  ") -> str:
    """A pbj message as indented text (field names, nested blocks; close to protobuf's text format).

    Fields at their default (absent) value are left out; unknown fields are
    noted as a comment with their size.
    """
    lines: list[str] = []
    _message_lines(obj, 0, lines, indent)
    return "\n".join(lines)


def _value_lines(name: str, value: Any, depth: int, lines: list[str], indent: str) -> None:
    pad = indent * depth
    if pbj.is_message(value):
        lines.append(f"{pad}{name} {{")
        _message_lines(value, depth + 1, lines, indent)
        lines.append(f"{pad}}}")
    else:
        lines.append(f"{pad}{name}: {_scalar_text(value)}")


def _message_lines(obj: Any, depth: int, lines: list[str], indent: str) -> None:
    mi = info(type(obj))
    by_number = []
    for f in mi.fields:
        by_number.append((f.number, f, getattr(obj, f.name)))
    for o in mi.oneofs:
        value = getattr(obj, o.name)
        if isinstance(value, OneOf):
            member = next(m for m in o.members if m.name == value.which)
            by_number.append((member.number, member, value.value))
    for _, f, value in sorted(by_number, key=lambda t: t[0]):
        name = f.proto_name or f.name
        if f.is_map:
            for k, v in (value.items() if isinstance(value, FrozenMap) else ()):
                lines.append(f"{indent * depth}{name} {{")
                _value_lines("key", k, depth + 1, lines, indent)
                _value_lines("value", v, depth + 1, lines, indent)
                lines.append(f"{indent * depth}}}")
        elif f.repeated:
            for v in value:
                _value_lines(name, v, depth, lines, indent)
        elif value is None:
            continue
        elif f.oneof is None and not f.optional and not pbj.is_message(value) and not value \
                and not (isinstance(value, float) and str(value).startswith("-")):
            continue  # implicit presence at its default
        else:
            _value_lines(name, value, depth, lines, indent)
    unknown = pbj.unknown_fields(obj)
    if unknown:
        lines.append(f"{indent * depth}# {len(unknown)} bytes of unknown fields")


# ----------------------------------------------------------------- commands

def _read_input(path: str | None) -> bytes:
    if path in (None, "-"):
        return sys.stdin.buffer.read()
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None


def _shipped(name: str) -> bytes:
    return resources.files("pbj").joinpath("data", name).read_bytes()


def _item_kind(item: Any) -> str:
    value = getattr(item, "item", None)
    return value.which if isinstance(value, OneOf) else "(none)"


def _demo(args: argparse.Namespace) -> int:
    steps = 6 + (2 if args.compare else 0)
    progress = _Progress(steps)
    t0 = time.perf_counter()
    schema = _shipped(SCHEMA_FILE)
    ns = pbj.load_descriptor_set(schema)
    Block = ns[BLOCK_TYPE]
    t_load = time.perf_counter() - t0
    progress.step("loaded schema")
    raw = gzip.decompress(_shipped(BLOCK_FILE))
    t0 = time.perf_counter()
    from pbj.compiler import codec_of
    codec_of(Block)
    t_compile = time.perf_counter() - t0
    progress.step("compiled codecs")
    t0 = time.perf_counter()
    block = pbj.decode(Block, raw)
    t_decode = time.perf_counter() - t0
    progress.step("decoded")
    t0 = time.perf_counter()
    forward = pbj.encode(block)
    t_forward = time.perf_counter() - t0
    progress.step("encoded forward")
    t0 = time.perf_counter()
    reverse = pbj.encode(block, reverse=True)
    t_reverse = time.perf_counter() - t0
    progress.step("encoded reverse")
    # Each item on its own against its slice of the input.
    slices = [raw[v[0]:v[1]] for number, wt, _s, _e, v in walk_fields(raw) if number == 1 and wt == 2]
    items_exact = len(slices) == len(block.items) and all(
        pbj.encode(item) == s and pbj.encode(item, reverse=True) == s
        for item, s in zip(block.items, slices, strict=False))
    progress.step("checked items one by one")
    google = None
    if args.compare:
        google = _google_times(schema, raw, progress)

    counts = collections.Counter(_item_kind(i) for i in block.items)
    mb = len(raw) / 1e6
    exact = forward == raw and reverse == raw and items_exact
    print(f"Hedera block {BLOCK_FILE.split('.')[0]}: {len(raw):,} bytes, {len(block.items):,} items")
    print(f"schema: {len(ns.files)} files, {len(ns.messages)} messages, {len(ns.enums)} enums "
          f"loaded in {t_load:.3f} s; codecs compiled in {t_compile:.3f} s")
    print("items by kind:")
    for kind, n in counts.most_common():
        print(f"  {kind:<22}{n:>6,}")
    print(f"decode          {t_decode:8.3f} s  {mb / t_decode:7.1f} MB/s")
    print(f"encode forward  {t_forward:8.3f} s  {mb / t_forward:7.1f} MB/s")
    print(f"encode reverse  {t_reverse:8.3f} s  {mb / t_reverse:7.1f} MB/s")
    if google is not None:
        if isinstance(google, str):
            print(f"google protobuf: {google}")
        else:
            g_dec, g_enc, g_exact = google
            print(f"google decode   {g_dec:8.3f} s  {mb / g_dec:7.1f} MB/s  (protobuf upb, same run)")
            print(f"google encode   {g_enc:8.3f} s  {mb / g_enc:7.1f} MB/s  (byte-exact: {'yes' if g_exact else 'no'})")
    print(f"byte-exact: {'yes' if exact else 'no'}")
    return 0 if exact else 1


def _google_times(schema: bytes, raw: bytes, progress: _Progress) -> tuple[float, float, bool] | str:
    """Decode and encode the block with Google's protobuf, for comparison."""
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    except ImportError:
        progress.step("google protobuf not installed", 2)
        return "not installed (pip install protobuf)"
    pool = descriptor_pool.DescriptorPool()
    for fd in descriptor_pb2.FileDescriptorSet.FromString(schema).file:
        pool.Add(fd)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(BLOCK_TYPE))
    t0 = time.perf_counter()
    msg = cls.FromString(raw)
    t_dec = time.perf_counter() - t0
    progress.step("google decoded")
    t0 = time.perf_counter()
    out = msg.SerializeToString(deterministic=True)
    t_enc = time.perf_counter() - t0
    progress.step("google encoded")
    return t_dec, t_enc, out == raw


def _load_schema(args: argparse.Namespace) -> pbj.Namespace:
    if args.descriptor_set:
        try:
            with open(args.descriptor_set, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise UserError(f"cannot read {args.descriptor_set}: {exc.strerror or exc}") from None
        try:
            return pbj.load_descriptor_set(data)
        except pbj.DecodeError as exc:
            raise UserError(f"{args.descriptor_set} is not a FileDescriptorSet: {exc}") from None
    if args.proto:
        try:
            return pbj.load_proto(args.proto, include=args.include or ())
        except pbj.SchemaError as exc:
            text = " | ".join(line.strip() for line in str(exc).splitlines() if line.strip())
            raise UserError(text) from None
    raise UserError("give a schema: --descriptor-set FILE or --proto FILE...")


def _message_class(args: argparse.Namespace) -> type:
    """The message class ``args.type`` of the schema the arguments name; UserError if there is none."""
    ns = _load_schema(args)
    cls = ns.get(args.type)
    if cls is None or not pbj.is_message(cls):
        close = [n for n in ns if n.rsplit(".", 1)[-1] == args.type.rsplit(".", 1)[-1]]
        hint = f" (did you mean {', '.join(close[:3])}?)" if close else ""
        if not ns.files:
            hint = " (the schema has no files: is it a FileDescriptorSet?)"
        raise UserError(f"no message type {args.type!r} in the schema{hint}")
    return cls


def _decode(args: argparse.Namespace) -> int:
    cls = _message_class(args)
    data = _read_input(args.file)
    try:
        obj = pbj.decode(cls, data)
    except pbj.DecodeError as exc:
        raise UserError(f"cannot decode {args.file or 'stdin'} as {args.type}: {exc}") from None
    to_json = getattr(pbj, "to_json", None)
    if to_json is not None and not args.text:
        text = to_json(obj, indent=2) if _accepts_indent(to_json) else to_json(obj)
    else:
        text = format_message(obj)
    sys.stdout.write(text + ("\n" if text and not text.endswith("\n") else ""))
    return 0


def _encode(args: argparse.Namespace) -> int:
    cls = _message_class(args)
    text = _read_input(args.file)
    try:
        obj = pbj.from_json(cls, text)
    except pbj.DecodeError as exc:
        reason = " ".join(str(exc).split())  # one line, whatever the JSON text held
        source = "stdin" if args.file in (None, "-") else args.file
        raise UserError(f"cannot read {source} as {args.type} JSON: {reason}") from None
    data = pbj.encode(obj)
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
    return 0


def _accepts_indent(fn: Any) -> bool:
    import inspect
    try:
        return "indent" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _decode_raw(args: argparse.Namespace) -> int:
    data = _read_input(args.file)
    try:
        text = format_raw(data)
    except pbj.DecodeError as exc:
        raise UserError(f"cannot decode {args.file or 'stdin'}: {exc}") from None
    if text:
        print(text)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pbj", description="Protocol Buffers for Python")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="round trip the real Hedera block shipped with pbj")
    demo.add_argument("--compare", action="store_true",
                      help="also time Google's protobuf (upb) on the same block")
    demo.set_defaults(run=_demo)
    dec = sub.add_parser("decode", help="decode a message with a schema and print it")
    src = dec.add_mutually_exclusive_group(required=True)
    src.add_argument("--descriptor-set", metavar="FILE", help="a FileDescriptorSet (protoc --descriptor_set_out)")
    src.add_argument("--proto", metavar="FILE", nargs="+", help=".proto files (compiled with grpcio-tools)")
    dec.add_argument("-I", "--include", metavar="DIR", action="append", help="import directory for --proto")
    dec.add_argument("--type", required=True, metavar="NAME", help="full name of the message type")
    dec.add_argument("--text", action="store_true", help="print the indented text form, not JSON")
    dec.add_argument("file", nargs="?", default="-", help="the encoded message (default: stdin)")
    dec.set_defaults(run=_decode)
    enc = sub.add_parser("encode", help="read a message as ProtoJSON and write its binary encoding to stdout")
    src = enc.add_mutually_exclusive_group(required=True)
    src.add_argument("--descriptor-set", metavar="FILE", help="a FileDescriptorSet (protoc --descriptor_set_out)")
    src.add_argument("--proto", metavar="FILE", nargs="+", help=".proto files (compiled with grpcio-tools)")
    enc.add_argument("-I", "--include", metavar="DIR", action="append", help="import directory for --proto")
    enc.add_argument("--type", required=True, metavar="NAME", help="full name of the message type")
    enc.add_argument("file", nargs="?", default="-", help="the message as JSON (default: stdin)")
    enc.set_defaults(run=_encode)
    raw = sub.add_parser("decode-raw", help="print the wire structure of a message without a schema")
    raw.add_argument("file", nargs="?", default="-", help="the encoded message (default: stdin)")
    raw.set_defaults(run=_decode_raw)
    from pbj.bench.run import build_parser as _bench_options  # argparse only; the runner loads lazily
    bench = _bench_options(sub.add_parser(
        "bench", help="benchmarks: reverse vs forward writer on the real block, pbj vs other libraries"))
    bench.set_defaults(run=_bench)
    return parser


def _bench(args: argparse.Namespace) -> int:
    from pbj.bench.run import execute

    args.argv = args.command_argv[1:]  # the recorded command: what followed "bench"
    return execute(args)


def main(argv: list[str] | None = None) -> int:
    """Run the command line.

    Args:
        argv: the arguments (default: ``sys.argv[1:]``).

    Returns:
        The exit status: 0 on success, 1 on a user error (one line on
        stderr) or a failed check, 2 on bad arguments.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    args = _parser().parse_args(argv)
    args.command_argv = argv
    try:
        return args.run(args)
    except (UserError, PbjError) as exc:
        print(f"pbj: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 1


if __name__ == "__main__":
    sys.exit(main())
