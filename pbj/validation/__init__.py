"""``buf.validate`` rules of a schema applied to pbj messages: :func:`validate`, :func:`violations`.

protovalidate (``buf/validate/validate.proto``) is how protobuf schemas carry constraints:
standard rules on fields (``string.min_len``, ``int32.gt``, ``repeated.unique``,
``required`` ...), rules on oneofs and messages, and CEL expressions (field, message and
predefined rules). pbj applies them with Buf's ``protovalidate`` package (the extra
``pbj-protobuf[validate]``), which carries the rules' semantics and passes protovalidate's
conformance suite: a pbj message is handed to it as the Google protobuf message of the same
schema (:func:`pbj.to_google`: the bytes, parsed by a class of a descriptor pool built from
the very descriptors the pbj class was loaded from, options included), and each violation
comes back as a :class:`Violation` with pbj's path and value.

Why not natively: the rules are CEL programs in ``validate.proto`` plus protovalidate's own
CEL functions (``isEmail``, ``isHostname``, ``isUri``, ``unique`` ...) whose exact texts and
edge cases its conformance suite pins down; a second implementation would have to match
them, where this one is protovalidate's by construction. The cost is one encode and one
parse per validation (docs/validation.md has the figures).

The rules live in the schema: a class loaded from ``.proto`` files or a descriptor set that
import ``buf/validate/validate.proto`` (or a ``_pb2`` module, :func:`pbj.load_google`) has
them; a class declared with ``@pbj.message`` has none (there is nowhere to write them) and
always validates.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from pbj.api import decode
from pbj.errors import SchemaError
from pbj.google import to_google
from pbj.schema import info, is_message
from pbj.schema.constructor import PLAIN_INIT
from pbj.schema.resolve import message_needed
from pbj.validation.messages import ViolationMessage
from pbj.validation.records import ValidationError, Violation, violation_of

__all__ = ["validate", "violations", "validate_on_build", "ValidationError", "Violation", "PROTO_INCLUDE"]

#: The folder holding ``buf/validate/validate.proto`` (protovalidate's schema, shipped with pbj): give it
#: to :func:`pbj.load_proto` (``include=[..., PROTO_INCLUDE]``) to compile files that import it.
PROTO_INCLUDE = Path(__file__).resolve().parent.parent / "data" / "protovalidate"

M = TypeVar("M")


_PV: list = []  # the protovalidate module, once imported


def _protovalidate() -> Any:
    if _PV:
        return _PV[0]
    try:
        import protovalidate
    except ImportError as exc:
        raise ImportError("pbj.validate needs Buf's protovalidate package: pip install 'pbj-protobuf[validate]'") \
            from exc
    _PV.append(protovalidate)
    return protovalidate


def violations(msg: Any, /, *, fail_fast: bool = False) -> list[Violation]:
    """Every ``buf.validate`` rule of its schema that message ``msg`` breaks.

    Args:
        msg: a pbj message.
        fail_fast: stop at the first violation.

    Returns:
        The :class:`Violation` list, in protovalidate's order; empty when ``msg`` is valid. A
        message missing a proto2 ``required`` field is judged as it is, as protovalidate judges
        such a Google message (``buf.validate`` rules are not proto2's ``required``; ``pbj.encode``
        checks that).

    Raises:
        TypeError: ``msg`` is not a pbj message.
        SchemaError: a rule of the schema does not compile (protovalidate's ``CompilationError``: a
            CEL expression with a syntax error, a rule on a field of another type), naming the message.
        ValueError: a CEL rule fails while it runs (protovalidate's ``EvaluationError``), naming the
            message; a type error in a CEL expression (``this.size()`` on an ``int32``) is one: CEL
            expressions' types are checked as they run, never when the schema is loaded.
        ImportError: ``protovalidate`` (or Google's ``protobuf``) is not installed.
    """
    pv = _protovalidate()
    if not is_message(msg) or isinstance(msg, type):
        raise message_needed(msg, "pbj.validate")
    gmsg = to_google(msg)
    try:
        found = pv.collect_violations(gmsg, fail_fast=fail_fast)
    except pv.CompilationError as exc:
        raise SchemaError(f"a buf.validate rule does not compile: {exc}", cls_name=info(type(msg)).full_name) \
            from None
    except pv.EvaluationError as exc:
        raise ValueError(f"{info(type(msg)).full_name}: a buf.validate rule failed to run: {exc}") from None
    if not found:
        return []
    return [violation_of(msg, decode(ViolationMessage, v.proto.to_binary()), v) for v in found]


def validate(msg: M, /, *, fail_fast: bool = False) -> M:
    """Check message ``msg`` against the ``buf.validate`` rules of its schema.

    Args:
        msg: a pbj message.
        fail_fast: stop at the first violation.

    Returns:
        ``msg`` itself, when it is valid (so ``x = pbj.validate(Cls(...))`` builds and checks).

    Raises:
        ValidationError: a rule is broken; ``.violations`` lists each, with its path.
        TypeError, SchemaError, ValueError, ImportError: as :func:`violations`.
    """
    found = violations(msg, fail_fast=fail_fast)
    if found:
        raise ValidationError(info(type(msg)).full_name, found)
    return msg


def validate_on_build(target: Any, /, enabled: bool = True) -> None:
    """Validate every message of ``target`` when it is built (its constructor, ``pbj.replace``).

    Reading data does not validate (``pbj.decode``, ``pbj.from_json``, ``pbj.from_dict``,
    ``pbj.from_python``, ``pbj.from_text``, unpickling: they build with the class's own checking
    ``__init__``): data read from the wire is checked where the program chooses, with :func:`validate`.
    ``copy.copy`` and ``copy.deepcopy`` of a loaded message build through the constructor, so they do.

    Args:
        target: a :class:`pbj.Namespace` (each of its message classes) or one message class.
        enabled: ``False`` turns it off again.

    Raises:
        TypeError: ``target`` is neither. The constructor then raises :class:`ValidationError`
            for a message that breaks a rule (after its own type and range checks).
    """
    if isinstance(target, type) and is_message(target):
        classes = [target]
    elif hasattr(target, "messages") and isinstance(target.messages, Mapping):  # a Namespace: builds its classes
        classes = list(target.messages.values())
    else:
        raise TypeError(f"validate_on_build takes a pbj.Namespace or a message class, not {target!r}")
    for cls in classes:
        _switch(cls, enabled)


def _switch(cls: type, enabled: bool) -> None:
    plain = cls.__dict__.get(PLAIN_INIT)
    if not enabled:
        if plain is not None:
            type.__setattr__(cls, "__init__", plain)
            type.__delattr__(cls, PLAIN_INIT)
        return
    if plain is not None:
        return
    build: Any = cls
    build.__init__(object.__new__(cls))  # the first call compiles the class's checking __init__ and installs it
    plain = cls.__dict__["__init__"]

    def __init__(self: Any, /, **kwargs: Any) -> None:
        plain(self, **kwargs)
        validate(self)

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    __init__.__doc__ = plain.__doc__
    type.__setattr__(cls, PLAIN_INIT, plain)
    type.__setattr__(cls, "__init__", __init__)
