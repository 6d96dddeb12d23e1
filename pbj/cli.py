"""The ``pbj`` command line (also ``python -m pbj``)."""

from __future__ import annotations

import argparse
import sys

import pbj


def _demo(args: argparse.Namespace) -> int:
    @pbj.message
    class Timestamp:
        seconds: int = pbj.field(1, "int64")
        nanos: int = pbj.field(2, "int32")

    value = Timestamp(seconds=1_700_000_000, nanos=123)
    data = pbj.encode(value)
    same = pbj.encode(value, reverse=True) == data and pbj.decode(Timestamp, data) == value
    print(f"encoded {value} to {len(data)} bytes: {data.hex()}")
    print(f"byte-exact: {'yes' if same else 'no'}")
    return 0 if same else 1


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = argparse.ArgumentParser(prog="pbj", description="Protocol Buffers for Python")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="round trip a message and check the bytes").set_defaults(run=_demo)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
