"""proto2 ``required`` fields: which messages can miss one, and the paths of those missing.

protobuf.dev "Language Guide (proto2)", "Required" (and editions
``field_presence = LEGACY_REQUIRED``, "Feature Settings for Editions"): a
message whose ``required`` field is not set is *uninitialized*; Google's
runtimes refuse to serialize or parse it (C++ ``SerializeToString`` /
``ParseFromString``, Java ``build()`` / ``parseFrom``, Go ``proto.Marshal`` /
``proto.Unmarshal``) unless asked for a partial message
(``SerializePartialToString``, ``ParsePartialFromString``, Go
``AllowPartial``). The check runs at any depth: in singular, repeated and
map-value sub-messages, in oneof members and in the values of extensions
(a message-typed extension whose message has a required field).

The check costs nothing for classes that cannot reach a required field: whether
a class can (through any chain of message fields) is decided once per class
and kept on the class (:func:`reaches_required`, :data:`FREE`); only then does
:func:`missing_required` walk the object tree, along the fields that can lead
to one. :mod:`pbj.api`, :mod:`pbj.protojson` and the text format call
:func:`check_encode` / :func:`check_decode` at their entry points.
"""

from __future__ import annotations

import weakref
from typing import Any

from pbj.depth import nesting_depth, too_deep
from pbj.errors import DecodeError, EncodeError, format_path
from pbj.schema import info, is_message, stored

__all__ = ["FREE", "GENERATION", "NATIVE_SHAPES", "reaches_required", "missing_required", "missing_text",
           "check_encode", "check_decode", "forget_answers", "native_steps"]

#: The class attribute naming a class that cannot reach a required field: it holds the class
#: itself (so a subclass never inherits the answer). The entry points test
#: ``getattr(obj, FREE, None) is not obj.__class__`` before calling :func:`check_encode` /
#: :func:`check_decode`: one attribute look-up, no allocation, and it dies with the class.
FREE = "__pbj_free__"
#: The class attribute holding (the class, whether it reaches a required field, its walk plan).
_STATE = "__pbj_required__"

_SINGLE, _REPEATED, _MAP, _ONEOF, _EXTENSIONS = "single", "repeated", "map", "oneof", "extensions"
#: The shape of a walk step as the native engine's check reads it (``pbj/_native/required.c``, ``RS_*``).
NATIVE_SHAPES = {None: 0, _SINGLE: 1, _REPEATED: 2, _MAP: 3, _ONEOF: 4, _EXTENSIONS: 5}
#: ``[n]``: the generation of the answers; :func:`forget_answers` adds one before it takes any
#: back. The native engine's check keeps a table per class built from the walk plans of one
#: generation, and builds them again when it changes (``pbj/_native/required.c``).
GENERATION = [0]
#: Every class holding an answer, so that :func:`forget_answers` can take them back.
_ANSWERED: weakref.WeakSet[type] = weakref.WeakSet()


def _state(cls: type) -> list | None:
    state = cls.__dict__.get(_STATE)
    return state if state is not None and state[0] is cls else None


def _remember(cls: type, reaches: bool) -> list:
    state = [cls, reaches, None]
    setattr(cls, _STATE, state)
    if not reaches:
        setattr(cls, FREE, cls)
    _ANSWERED.add(cls)
    return state


def forget_answers() -> None:
    """Take back every class's answer: an extension that can hold a required field was registered.

    Extensions are registered at any time (:func:`pbj.extension`, a schema
    load), and one whose message type has a required field makes its
    extendee, and every class that reaches the extendee, able to miss one. The
    answers are decided again at the next check. Called by
    :func:`pbj.extensions.declare.register`; rare, so it need not be cheap.
    """
    GENERATION[0] += 1  # first: no native table of the answers taken back is read again
    for cls in list(_ANSWERED):
        for name in (_STATE, FREE):
            if name in cls.__dict__:
                delattr(cls, name)
    _ANSWERED.clear()


def _extension_holders(cls: type) -> list[type]:
    """The holder classes of the extensions registered now for ``cls`` (:mod:`pbj.extensions`)."""
    return [ext.holder for ext in getattr(info(cls), "extensions", {}).values()]


def _sub_message(f: Any) -> Any:
    sub = f.map_value if f.is_map else f.type
    return sub if isinstance(sub, type) and is_message(sub) else None


def reaches_required(cls: type) -> bool:
    """Whether a message of ``cls`` can hold a ``required`` field, itself or in any sub-message.

    Decided once per class from its schema (``pbj.schema.info``) and kept on
    the class (its ``__pbj_required__`` attribute).

    Args:
        cls: a pbj message class.

    Returns:
        ``True`` if ``cls`` or a message class reachable through its fields
        (singular, repeated, map values, oneof members) has a required field.
    """
    state = _state(cls)
    if state is not None:
        return state[1]
    seen: set[type] = set()
    stack = [cls]
    result = False
    while stack and not result:
        c = stack.pop()
        if c in seen:
            continue
        seen.add(c)
        for f in info(c).all_fields():
            if f.required and f.oneof is None:
                result = True
                break
            sub = _sub_message(f)
            if sub is not None and sub not in seen:
                stack.append(sub)
        stack.extend(h for h in _extension_holders(c) if h not in seen)
    if result:
        _remember(cls, True)
    else:  # everything reachable from cls is reachable from it: none of them reach one either
        for c in seen:
            if _state(c) is None:
                _remember(c, False)
    return result


def _plan(cls: type) -> tuple[tuple[str, bool, str | None, str | None], ...]:
    """The steps of the walk over ``cls``, in field-number order.

    Each step is (attribute, required, shape of the sub-messages to walk into
    or ``None``, the oneof member or ``None``).
    """
    reaches_required(cls)
    state = _state(cls)
    assert state is not None
    if state[2] is not None:
        return state[2]
    mi = info(cls)
    steps: list[tuple[int, str, bool, str | None, str | None]] = []
    for f in mi.fields:
        sub = _sub_message(f)
        shape = None
        if sub is not None and reaches_required(sub):
            shape = _MAP if f.is_map else _REPEATED if f.repeated else _SINGLE
        if f.required or shape is not None:
            steps.append((f.number, f.name, f.required, shape, None))
    for o in mi.oneofs:
        for m in o.members:
            sub = _sub_message(m)
            if sub is not None and reaches_required(sub):
                steps.append((m.number, o.name, False, _ONEOF, m.name))
    if any(reaches_required(h) for h in _extension_holders(cls)):
        steps.append((1 << 32, "_pbj_extensions", False, _EXTENSIONS, None))
    plan = tuple(step[1:] for step in sorted(steps, key=lambda step: step[0]))
    state[2] = plan
    return plan


def native_steps(cls: type) -> tuple[list, tuple[tuple[str, bool, int, str | None], ...]] | None:
    """The walk of ``cls`` for the native engine's check (``pbj/_native/required.c``), or ``None``
    when ``cls`` cannot reach a required field.

    Returns:
        ``(state, steps)``: the class's state list (``__pbj_required__``; the engine keeps its
        table of the class there, so it goes with the answer) and the walk plan of
        :func:`missing_required`, each step ``(attribute, required, shape, member)`` with the shape
        as :data:`NATIVE_SHAPES` codes it.
    """
    if not reaches_required(cls):
        return None
    steps = _plan(cls)
    state = _state(cls)
    assert state is not None
    return state, tuple((name, req, NATIVE_SHAPES[shape], member) for name, req, shape, member in steps)


def missing_required(obj: Any) -> list[list[Any]]:
    """The paths of every ``required`` field not set in ``obj``, at any depth, in field order.

    Args:
        obj: a pbj message instance.

    Returns:
        A list of paths (as :class:`~pbj.errors.EncodeError.path`: field
        names, repeated indexes as ``int``, map keys wrapped in a one-element
        tuple, a oneof as its attribute then its member's name); empty if
        ``obj`` is initialized.
    """
    out: list[list[Any]] = []
    if reaches_required(type(obj)):
        _walk(obj, [], out)
    return out


def _walk(obj: Any, path: list[Any], out: list[list[Any]]) -> None:
    get = stored if getattr(type(obj), "__pbj_defaults__", None) else getattr  # unset: None, not the default
    for name, is_required, shape, member in _plan(type(obj)):
        value = get(obj, name)
        if value is None:
            if is_required:
                out.append([*path, name])
        elif shape is _SINGLE:
            _walk(value, [*path, name], out)
        elif shape is _REPEATED:
            for i, item in enumerate(value):
                _walk(item, [*path, name, i], out)
        elif shape is _MAP:
            for key, item in value.items():
                _walk(item, [*path, name, (key,)], out)
        elif shape is _ONEOF and value[0] == member:
            _walk(value[1], [*path, name, member], out)
        elif shape is _EXTENSIONS:
            _walk_extensions(value, path, out)


def _walk_extensions(holders: tuple, path: list[Any], out: list[list[Any]]) -> None:
    """Walk the message values of the extensions present (path step: ``[pkg.ext]``)."""
    for holder in holders:
        if not reaches_required(type(holder)):
            continue
        ext = holder.__pbj_extension__
        value = ext.value_of(holder)
        if ext.repeated:
            for i, item in enumerate(value):
                _walk(item, [*path, ext.json_name, i], out)
        elif value is not None:
            _walk(value, [*path, ext.json_name], out)


def missing_text(paths: list[list[Any]]) -> str:
    """The reason text naming every missing path: ``required fields not set: $.inner.a, $.items[2].b``."""
    noun = "field" if len(paths) == 1 else "fields"
    return f"required {noun} not set: " + ", ".join(format_path(p) for p in paths)


def check_encode(obj: Any) -> None:
    """Refuse to write ``obj`` if a ``required`` field is missing (as ``SerializeToString``).

    Raises:
        EncodeError: naming every missing path (``path`` is the message itself, ``[]``)
            and ``missing`` holds them all; or the message is nested too deep for the check
            to follow within Python's recursion limit (:func:`pbj.depth.too_deep`).
    """
    try:
        paths = missing_required(obj)
    except RecursionError:
        raise too_deep(obj, "the required-field check") from None
    if paths:
        err = EncodeError(missing_text(paths))
        err.missing = paths
        raise err


def check_decode(obj: Any, error: type[DecodeError] = DecodeError) -> None:
    """Refuse a decoded ``obj`` if a ``required`` field is missing (as ``ParseFromString``).

    Args:
        obj: the decoded message.
        error: the :class:`DecodeError` class to raise (``JSONError`` for ProtoJSON).

    Raises:
        DecodeError: (or ``error``) naming every missing path; ``path`` is the
            message itself and ``missing`` holds them all; or the decoded message is
            nested too deep for the check to follow within Python's recursion limit.
    """
    try:
        paths = missing_required(obj)
    except RecursionError:
        raise error(f"the decoded message is nested {nesting_depth(obj)} levels deep, more than the "
                    "required-field check can follow within Python's recursion limit "
                    "(pass allow_partial=True to skip the check)") from None
    if paths:
        err = error(missing_text(paths))
        err.missing = paths
        raise err
