"""pbj's native engine: an optional C extension that runs the codec plan.

The extension (``pbj._native._engine``, C sources in this directory) is
built by ``pip install`` where a C compiler and Python's headers exist; where
they do not, pbj runs its pure-Python engine and nothing else changes. Both
engines give the same objects, the same bytes and the same errors: on any
error, and on any input or class it does not handle, the native engine hands
the same input (or object) to the pure-Python engine, which raises the error
it always raised.

Choosing the engine: the native one when it is built, unless the environment
variable ``PBJ_ENGINE=python`` is set when pbj is imported;
:func:`use_engine` switches at run time and :func:`engine` says which one is
in use.

At first use of a class the codec compiler (:mod:`pbj.codec.compiler`) hands
the class's plan to :func:`adopt`, which flattens it (:func:`native_plan`)
into tuples the C code (``plan.c``) turns into its own compact form, stored
on the class's codec (``Codec.native``). A class the engine does not handle
(:func:`native_plan` returns ``None``, or ``plan.c`` refuses it, or it refers
to such a class) keeps ``native = None`` and always runs in Python.

What the native engine does (see docs/performance.md for figures):

* ``decode``: every field kind of the plan (all scalars, packed and unpacked
  repeated fields, oneofs, maps, groups, closed enums, unknown fields kept
  byte for byte, proto2 and editions defaults and presence, the depth limit;
  ``max_size`` is checked before either engine runs). It hands to Python
  every input that is an error, a singular sub-message (a map entry's message
  value too) that occurs more than once (merged by the spec), a closed enum's
  non-member number (kept as it arrived), a string that is not UTF-8 in a field
  that keeps any bytes, and nesting deeper than 200 levels. A ``float`` NaN
  keeps its bits as :mod:`pbj.codec.float32` holds them. Classes with
  extension ranges are declined (their plan's ``extension_ranges``).
* ``encode`` (forward writer, sizes cached on the objects as the Python writer
  caches them): every field kind; it hands to Python any object holding a
  value of an unexpected Python type or out of its type's range.
"""

from __future__ import annotations

import os
from typing import Any

from pbj import engines, scalars, wire
from pbj.codec import plan as P
from pbj.codec.compiler import register_engine
from pbj.schema import EMPTY_MAP, FrozenMap, OneOf, enum_default

__all__ = ["engine", "use_engine", "available", "adopt", "native_plan", "ENGINE_ENV", "NATIVE"]

#: The environment variable that selects the engine at import: ``python`` or ``native``.
ENGINE_ENV = "PBJ_ENGINE"

_S_SINGULAR, _S_REPEATED, _S_MAP, _S_ONEOF = range(4)
#: The sizes of the records :func:`native_plan` makes: a field (``_field``), a message.
_FIELD_ITEMS, _MESSAGE_ITEMS = 17, 10


def layout() -> dict[str, int]:
    """Every code and record size the engine reads from a plan, by name, as the Python side sends them.

    Handed to the extension at import, which refuses (``ImportError``) unless each is its own:
    the type codes (:mod:`pbj.scalars`, ``message``), labels, parse forms and write steps
    (:mod:`pbj.codec.plan`), slot kinds, and the sizes of the field and message records.
    """
    out = {row.name: row.code for row in scalars.BY_CODE}
    out["message"] = P.MESSAGE
    out.update(IMPLICIT=P.IMPLICIT, EXPLICIT=P.EXPLICIT, REPEATED=P.REPEATED, PACKED=P.PACKED, MAP=P.MAP,
               MEMBER=P.MEMBER, VALUE=P.VALUE, PACKED_RUN=P.PACKED_RUN, GROUP_START=P.GROUP_START, FIELD=P.FIELD,
               RUN=P.RUN, S_SINGULAR=_S_SINGULAR, S_REPEATED=_S_REPEATED, S_MAP=_S_MAP, S_ONEOF=_S_ONEOF,
               field_items=_FIELD_ITEMS, message_items=_MESSAGE_ITEMS)
    return out


try:
    from pbj._native import _engine  # type: ignore[attr-defined]
except ImportError:  # not built (no compiler at install time): the pure-Python engine runs
    _engine = None
    NATIVE: engines.Engine | None = None
else:
    _engine.setup(FrozenMap, OneOf, EMPTY_MAP, layout())  # ImportError if the engine was built for another plan
    #: The native engine's entry points (``None`` when it is not built).
    NATIVE = engines.Engine("native", _engine.decode, _engine.encode, _engine.write_reverse)
    engines.ENTRY_POINTS = (NATIVE, _engine.entry_points)  # pbj.api's decode and encode in C (entry.c)

_FIELD_PLAN = frozenset({"name", "proto_name", "number", "idx", "slot", "label", "type", "group", "tag", "end_tag",
                         "width", "sub", "enum", "closed", "key", "default", "oneof",
                         # the writers read the stored state (None when unset), never the declared default
                         "declared_default"})
_MESSAGE_PLAN = frozenset({"idx", "full_name", "cls", "slots_class", "slots", "fields", "writes", "oneofs",
                           "dispatch", "leaf"})


def available() -> bool:
    """True when the native engine is built (whichever engine is in use)."""
    return _engine is not None


def engine() -> str:
    """The engine pbj encodes and decodes with: ``"native"`` or ``"python"``.

    ``"native"`` when the C extension is built and neither ``PBJ_ENGINE=python``
    (at import) nor ``use_engine("python")`` chose the pure-Python engine.
    """
    return engines.CURRENT.engine.name


def use_engine(name: str) -> None:
    """Select the engine pbj encodes and decodes with from now on, in every thread.

    Args:
        name: ``"native"`` (the C extension) or ``"python"`` (the pure-Python engine).

    Raises:
        ValueError: ``name`` is neither.
        RuntimeError: ``"native"`` was asked for but the extension is not built
            (pbj was installed where no C compiler was found).
    """
    if name not in ("native", "python"):
        raise ValueError(f"engine must be 'native' or 'python', not {name!r}")
    if name == "native":
        if NATIVE is None:
            raise RuntimeError("pbj's native engine is not built (no C compiler at install time?); "
                               "reinstall pbj where gcc and Python's headers exist")
        engines.select(NATIVE)
    else:
        engines.select(engines.PYTHON)


def _extras_unset(record: Any, known: frozenset[str]) -> bool:
    """True when every field of a plan record this module does not know is empty (plans grow)."""
    return all(not getattr(record, name) for name in record._fields if name not in known)


def _slot_table(mp: P.MessagePlan) -> tuple[tuple[Any, ...], tuple[int, ...]] | None:
    defaults: list[Any] = [None] * len(mp.slots)
    kinds: list[int | None] = [None] * len(mp.slots)
    for o in mp.oneofs:
        kinds[o.slot] = _S_ONEOF
    for f in mp.fields:
        if f.oneof >= 0:
            continue
        if f.label == P.MAP:
            defaults[f.slot], kinds[f.slot] = EMPTY_MAP, _S_MAP
        elif f.label in (P.REPEATED, P.PACKED):
            defaults[f.slot], kinds[f.slot] = (), _S_REPEATED
        else:
            defaults[f.slot], kinds[f.slot] = f.default, _S_SINGULAR
    if any(k is None for k in kinds):
        return None
    return tuple(defaults), tuple(k for k in kinds if k is not None)


def _field(f: P.FieldPlan) -> tuple[Any, ...] | None:
    # ``utf8`` false (proto2, utf8_validation NONE): the engine still decodes and encodes UTF-8
    # strictly, and hands a string that is not valid UTF-8 (or holds the surrogates that stand for
    # such bytes) to Python, which keeps its bytes (surrogateescape): same values, same bytes.
    if not _extras_unset(f._replace(utf8=False), _FIELD_PLAN):
        return None
    if f.group and f.type != P.MESSAGE:
        return None
    vtag, ktag, vdefault = b"", 0, None
    if f.label == P.MAP:
        vwire = wire.WIRE_LEN if f.type == P.MESSAGE else scalars.BY_CODE[f.type].wire_type
        vtag = wire.tag_bytes(2, vwire)
        ktag = wire.make_tag(1, scalars.BY_CODE[f.key].wire_type)
        if f.type != P.MESSAGE:
            if f.enum is not None:
                vdefault = f.default if f.default is not None else enum_default(f.enum)
            else:
                vdefault = scalars.BY_CODE[f.type].zero
    enum_map = {int(m): m for m in f.enum} if f.enum is not None else None
    return (f.number, f.slot, f.label, f.type, f.key, f.oneof, int(f.group), int(bool(f.closed)), f.width,
            f.tag, f.end_tag, vtag, ktag, f.name, enum_map, vdefault, f.sub)


def native_plan(mp: P.MessagePlan) -> tuple[Any, ...] | None:
    """The flat form of one class's plan that the C engine reads (``plan.c``), or ``None`` to decline.

    Declines a plan that has fields this module does not know with a value set
    (a newer plan feature: the pure-Python engine handles that class).
    """
    if not _extras_unset(mp, _MESSAGE_PLAN):
        return None
    cls, base = mp.cls, mp.slots_class
    if not issubclass(cls, base) or cls.__basicsize__ != base.__basicsize__:
        return None
    try:
        descrs = tuple(base.__dict__[name] for name in mp.slots)
        unknown, size = base.__dict__["_pbj_unknown"], base.__dict__["_pbj_size"]
    except KeyError:
        return None
    table = _slot_table(mp)
    fields = tuple(_field(f) for f in mp.fields)
    if table is None or any(f is None for f in fields):
        return None
    oneofs = tuple((o.slot, tuple(o.members)) for o in mp.oneofs)
    return (cls, descrs, unknown, size, table[0], table[1], fields, tuple(mp.dispatch), tuple(mp.writes), oneofs)


def adopt(batch: P.BatchPlan, codecs: list[Any]) -> None:
    """Give each codec of a compiled batch its native plan (``codec.native``; ``None``: declined).

    Called by the codec compiler once the batch's codecs exist; does nothing
    when the extension is not built.
    """
    if _engine is None:
        return
    externals = []
    for c in batch.classes[len(batch.messages):]:
        codec = c.__dict__.get("__pbj_codec__")
        externals.append(getattr(codec, "native", None))
    flat = tuple(native_plan(mp) for mp in batch.messages)
    caps = _engine.build(tuple(f if f is not None else () for f in flat), tuple(externals))
    for codec, cap in zip(codecs, caps, strict=True):
        codec.native = cap


if _engine is not None:
    register_engine(adopt)  # every batch plan finished from now on is handed to the engine
    if os.environ.get(ENGINE_ENV, "native").strip().lower() != "python":
        use_engine("native")
