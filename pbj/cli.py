"""The ``pbj`` command line (also ``python -m pbj``).

Commands:

* ``pbj demo``: decode the real Hedera block that ships with pbj, encode it
  again with both writers and check the bytes (prints counts and timings).
* ``pbj decode (--descriptor-set F | --proto F... [-I DIR...]) --type NAME [--text] [FILE|-]``:
  decode a binary message and print it as ProtoJSON (``pbj.to_json``), or in
  the text format with ``--text`` (``pbj.to_text`` with unknown fields and
  without expanding ``Any`` values: what ``protoc --decode`` prints).
  JSON has no place for unknown fields: their count and size are reported on
  stderr.
* ``pbj encode (--descriptor-set F | --proto F... [-I DIR...]) --type NAME [--from-text [--read-unknown-fields]]
  [-o F] [--force] [FILE|-]``:
  read a message as ProtoJSON (``pbj.from_json``), or in the text format with
  ``--from-text`` (``pbj.from_text``; ``--read-unknown-fields`` reads the fields
  ``decode --text`` prints by number back as unknown fields, so its output
  encodes to the same bytes), and write its binary encoding to ``-o F``
  or stdout (not to a terminal unless ``--force``).
* ``pbj --version``: the installed pbj's version.
* ``pbj doctor``: the engine in use, the Python, the platform and the installed wheel's tag
  (:func:`pbj.platforms.report`; docs/install.md).

Standard input is ``-`` (the default FILE), and error messages name it so.
* ``pbj decode-raw [FILE|-]``: print the wire structure of a message without
  a schema, as ``protoc --decode_raw`` does (:func:`pbj.textformat.raw.format_raw`).

``decode`` and ``decode-raw`` read gzip input (``.blk.gz``) as its contents.
* ``pbj bench [--quick] [--json F] [--plot F.png] ...``: the benchmarks of
  ``docs/performance.md`` (:mod:`pbj.bench`; peers from the ``bench`` extra).

User errors (a bad file, an unknown type, a malformed payload) print one line
``pbj: error: ...`` to stderr and exit with status 1 (2 for bad arguments);
Ctrl-C prints ``pbj: interrupted`` and exits with status 130.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import sys
import time
import zlib
from importlib import resources
from pathlib import Path
from typing import Any

import pbj
from pbj.errors import PbjError
from pbj.schema import OneOf, info
from pbj.textformat.raw import format_raw, walk_fields
from pbj.user_input import UserError, load_schema

__all__ = ["main", "format_raw", "walk_fields", "UserError"]

BLOCK_FILE = "000000000000000000000000000000497558.blk.gz"
SCHEMA_FILE = "hapi-v0.55.0.binpb"
BLOCK_TYPE = "com.hedera.hapi.block.stream.Block"
_GZIP_MAGIC = b"\x1f\x8b"


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


# ----------------------------------------------------------------- commands

def _source(path: str | None) -> str:
    """How an input is named in messages: its path, or ``-`` for stdin (the spelling the commands take)."""
    return "-" if path in (None, "-") else path  # type: ignore[return-value]


def _read_input(path: str | None) -> bytes:
    """The bytes of ``path`` (``-`` or ``None``: stdin), gunzipped when they are gzip data.

    Gzip input is recognised by its magic bytes ``1f 8b``: no protobuf message
    starts with them (``0x1f`` is a tag of wire type 7, which does not exist),
    and no JSON text does.
    """
    source = _source(path)
    if path in (None, "-"):
        data = sys.stdin.buffer.read()
    else:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise UserError(f"cannot read {source}: it starts as gzip data but does not decompress: {exc}") from None
    return data


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
    from pbj.codec import codec_of
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
    print(f"engine: {pbj.engine()}")
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


def _message_class(args: argparse.Namespace) -> tuple[type, pbj.Namespace]:
    """The message class ``args.type`` and the schema the arguments name (a descriptor set's classes
    that ``args.type`` reaches); UserError if there is none."""
    ns = load_schema(args, only=(args.type,))
    cls = ns.get(args.type)
    if cls is not None and not pbj.is_message(cls):
        raise UserError(f"{args.type!r} is an enum, not a message type: --type names the message "
                        "the data is an encoding of")
    if cls is None:
        hint = ns.suggest(args.type.lstrip("."))
        if not ns.files:
            hint = " (the schema has no files: is it a FileDescriptorSet?)"
        raise UserError(f"no message type {args.type!r} in the schema{hint}")
    return cls, ns


def _decode(args: argparse.Namespace) -> int:
    cls, ns = _message_class(args)
    data = _read_input(args.file)
    try:
        obj: Any = pbj.decode(cls, data, allow_partial=True)
    except pbj.DecodeError as exc:
        raise UserError(f"cannot decode {_source(args.file)} as {args.type}: {exc}") from None
    _warn_missing_required(obj)
    if args.text:  # as protoc --decode prints it: unknown fields too, Any values not expanded
        text = pbj.to_text(obj, print_unknown_fields=True, expand_any=False, extensions=ns)
    else:
        text = pbj.to_json(obj, indent=2, allow_partial=True)
        _warn_unknown_dropped(obj)
    sys.stdout.write(text + ("\n" if text and not text.endswith("\n") else ""))
    return 0


def _warn_missing_required(obj: Any) -> None:
    """Say on stderr which proto2 ``required`` fields ``obj`` lacks, as protoc --decode and --encode do
    ("warning:  Input message is missing required fields: ..."): the message is still printed or written."""
    from pbj.required import missing_required, missing_text

    paths = missing_required(obj)
    if paths:
        print(f"pbj: warning: the message is incomplete: {missing_text(paths)}", file=sys.stderr)


def _unknown_field_totals(obj: Any) -> collections.Counter:
    """The unknown fields kept anywhere in a decoded message tree, per message type.

    Returns:
        A ``Counter`` with, for each message full name that holds unknown
        fields, ``(name, "fields")`` (how many top-level unknown fields) and
        ``(name, "bytes")`` (their encoded size, tags included).
    """
    totals: collections.Counter = collections.Counter()
    stack = [obj]
    while stack:
        msg = stack.pop()
        mi = info(type(msg))
        unknown = pbj.unknown_fields(msg)
        if unknown:
            totals[mi.full_name, "fields"] += len(walk_fields(unknown))
            totals[mi.full_name, "bytes"] += len(unknown)
        for f in mi.fields:
            v = getattr(msg, f.name)
            if v is None:
                continue
            if f.is_map:
                stack.extend(x for x in v.values() if pbj.is_message(type(x)))
            elif f.repeated:
                stack.extend(x for x in v if pbj.is_message(type(x)))
            elif pbj.is_message(type(v)):
                stack.append(v)
        for o in mi.oneofs:
            v = getattr(msg, o.name)
            if v is not None and pbj.is_message(type(v.value)):
                stack.append(v.value)
    return totals


def _warn_unknown_dropped(obj: Any) -> None:
    """Say on stderr how many unknown fields the JSON output leaves out (ProtoJSON has no place for them)."""
    totals = _unknown_field_totals(obj)
    if not totals:
        return
    names = sorted({name for name, _ in totals})
    fields = sum(totals[n, "fields"] for n in names)
    size = sum(totals[n, "bytes"] for n in names)
    where = ", ".join(f"{n} ({totals[n, 'bytes']:,} bytes)" for n in names[:5])
    more = f" and {len(names) - 5} more types" if len(names) > 5 else ""
    print(f"pbj: warning: JSON has no place for unknown fields: {fields:,} unknown "
          f"field{'s' if fields != 1 else ''} ({size:,} bytes) left out, in {where}{more}; "
          "pbj decode-raw shows them", file=sys.stderr)


def _encode(args: argparse.Namespace) -> int:
    cls, ns = _message_class(args)
    if args.output is None and not args.force and sys.stdout.isatty():
        raise UserError("refusing to write binary data to a terminal: give -o FILE, redirect stdout, or --force")
    text = _read_input(args.file)
    try:
        if args.from_text:
            obj = pbj.from_text(cls, text, extensions=ns, read_unknown_fields=args.read_unknown_fields,
                                allow_partial=True)
        else:
            obj = pbj.from_json(cls, text, allow_partial=True)
    except (pbj.DecodeError, pbj.TextError) as exc:
        reason = " ".join(str(exc).split())  # one line, whatever the input text held
        source = _source(args.file)
        form = "text-format" if args.from_text else "JSON"
        raise UserError(f"cannot read {source} as {args.type} {form}: {reason}") from None
    _warn_missing_required(obj)
    data = pbj.encode(obj, allow_partial=True)
    if args.output is not None:
        try:
            with open(args.output, "wb") as fh:
                fh.write(data)
        except OSError as exc:
            raise UserError(f"cannot write {args.output}: {exc.strerror or exc}") from None
        return 0
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
    return 0


def _decode_raw(args: argparse.Namespace) -> int:
    data = _read_input(args.file)
    try:
        text = format_raw(data)
    except pbj.DecodeError as exc:
        raise UserError(f"cannot decode {_source(args.file)}: {exc}") from None
    if text:
        print(text)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pbj", description="Protocol Buffers for Python")
    parser.add_argument("--version", action="version", version=f"pbj {pbj.__version__}")
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
    dec.add_argument("--text", action="store_true",
                     help="print the text format (as protoc --decode does), not JSON")
    dec.add_argument("file", nargs="?", default="-", help="the encoded message (default: stdin)")
    dec.set_defaults(run=_decode)
    enc = sub.add_parser("encode", help="read a message as ProtoJSON (or text format) and write its binary "
                                        "encoding to stdout")
    src = enc.add_mutually_exclusive_group(required=True)
    src.add_argument("--descriptor-set", metavar="FILE", help="a FileDescriptorSet (protoc --descriptor_set_out)")
    src.add_argument("--proto", metavar="FILE", nargs="+", help=".proto files (compiled with grpcio-tools)")
    enc.add_argument("-I", "--include", metavar="DIR", action="append", help="import directory for --proto")
    enc.add_argument("--type", required=True, metavar="NAME", help="full name of the message type")
    enc.add_argument("--from-text", action="store_true", help="read the text format, not JSON")
    enc.add_argument("--read-unknown-fields", action="store_true",
                     help="with --from-text: read fields written by number (unknown fields, as decode --text "
                          "prints them) back as unknown fields")
    enc.add_argument("file", nargs="?", default="-", help="the message as JSON or text (default: stdin)")
    enc.add_argument("-o", "--output", metavar="FILE", help="write the encoding to FILE (default: stdout)")
    enc.add_argument("--force", action="store_true", help="write binary to stdout even when it is a terminal")
    enc.set_defaults(run=_encode, command_parser=enc)
    doctor = sub.add_parser("doctor", help="say which engine runs, on which Python and platform, from which wheel")
    doctor.set_defaults(run=_doctor)
    raw = sub.add_parser("decode-raw", help="print the wire structure of a message without a schema")
    raw.add_argument("file", nargs="?", default="-", help="the encoded message (default: stdin)")
    raw.set_defaults(run=_decode_raw)
    stubs = sub.add_parser("stubs", help="write a typed package (.py + .pyi stubs) for a schema, for mypy and pyright")
    src = stubs.add_mutually_exclusive_group(required=True)
    src.add_argument("--descriptor-set", metavar="FILE", help="a FileDescriptorSet (protoc --descriptor_set_out)")
    src.add_argument("--proto", metavar="FILE", nargs="+", help=".proto files (compiled with grpcio-tools)")
    stubs.add_argument("-I", "--include", metavar="DIR", action="append", help="import directory for --proto")
    stubs.add_argument("-o", "--out", metavar="DIR", required=True, help="directory to write the package into")
    stubs.add_argument("--module", metavar="NAME", default="protos",
                       help="name of the package written (default: protos); import it as NAME.<protobuf package>")
    stubs.set_defaults(run=_stubs)
    from pbj.connect.call import add_call_parser  # argparse only; grpcio or connectrpc is imported when it runs
    add_call_parser(sub)
    from pbj.arrow.command import add_command as _parquet_command  # argparse only; pyarrow loads when it runs
    _parquet_command(sub)
    from pbj.bench.run import build_parser as _bench_options  # argparse only; the runner loads lazily
    bench = _bench_options(sub.add_parser(
        "bench", help="benchmarks: reverse vs forward writer on the real block, pbj vs other libraries"))
    bench.set_defaults(run=_bench)
    return parser


def _doctor(args: argparse.Namespace) -> int:
    from pbj import _native
    from pbj.platforms import report

    for name, value in report(pbj.__version__, pbj.engine(), _native.available()):
        print(f"{name + ':':<14}{value}")
    return 0


def _stubs(args: argparse.Namespace) -> int:
    from pbj.stubs import write_stubs

    ns = load_schema(args)
    try:
        files = write_stubs(ns, args.out, args.module)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"cannot write to {args.out}: {exc.strerror or exc}") from None
    packages = sum(1 for f in files if f.name == "__init__.pyi")
    print(f"wrote {len(files)} files ({len(ns.messages)} messages, {len(ns.enums)} enums, {packages} modules) "
          f"to {Path(args.out) / args.module}; import them as {args.module}.<protobuf package>")
    return 0


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
        stderr) or a failed check, 2 on bad arguments, 130 when the command
        line (``argv`` not given) is interrupted with Ctrl-C (one line on stderr,
        no traceback; a caller that gives ``argv`` gets the ``KeyboardInterrupt``).
    """
    as_program = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = _parser().parse_args(argv)  # inside: building the parser imports the commands' modules
        args.command_argv = argv
        if getattr(args, "read_unknown_fields", False) and not args.from_text:
            args.command_parser.error("--read-unknown-fields reads the text format: give it with --from-text")
        return args.run(args)
    except (UserError, PbjError) as exc:
        print(f"pbj: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        if not as_program:
            raise
        print("pbj: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
