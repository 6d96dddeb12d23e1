"""What the commands of the ``pbj`` command line share: :class:`UserError` and the schema the user names.

``pbj.cli`` registers the commands of ``pbj.grpc.cli`` and ``pbj.arrow.command``; they raise
:class:`UserError` and read ``--descriptor-set``/``--proto`` through :func:`load_schema` from
here, below all of them, so no command imports the module that registers it.
"""

from __future__ import annotations

import argparse

import pbj

__all__ = ["UserError", "load_schema"]


class UserError(Exception):
    """A problem with the user's input: reported in one line, without a traceback."""


def load_schema(args: argparse.Namespace, only: tuple[str, ...] | None = None) -> pbj.Namespace:
    """The schema the arguments name: ``args.descriptor_set`` (a file) or ``args.proto`` (files, with ``args.include``).

    Args:
        args: the parsed command line.
        only: full names of the types the command needs: a descriptor set is loaded with
            ``only=`` (those and what they reach; ``pbj.load_descriptor_set``), or whole when
            one of them is not in it (so the caller's lookup can suggest close names).

    Returns:
        The loaded :class:`pbj.Namespace`.

    Raises:
        UserError: neither is given, the file cannot be read, or the schema does not load
            (the loader's error in one line).
    """
    if args.descriptor_set:
        try:
            with open(args.descriptor_set, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise UserError(f"cannot read {args.descriptor_set}: {exc.strerror or exc}") from None
        try:
            if only is not None:
                try:
                    return pbj.load_descriptor_set(data, only=only)
                except KeyError:  # a type the set lacks: the whole set, for the caller's hint
                    pass
            return pbj.load_descriptor_set(data)
        except (pbj.DecodeError, pbj.SchemaError) as exc:
            raise UserError(f"cannot load {args.descriptor_set} as --descriptor-set: {exc}") from None
    if args.proto:
        try:
            return pbj.load_proto(args.proto, include=args.include or ())
        except pbj.SchemaError as exc:
            text = " | ".join(line.strip() for line in str(exc).splitlines() if line.strip())
            raise UserError(text) from None
    raise UserError("give a schema: --descriptor-set FILE or --proto FILE...")
