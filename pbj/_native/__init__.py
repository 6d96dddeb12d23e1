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
  ``max_size`` is checked before either engine runs), and every input the
  Python parser accepts: a singular sub-message (a group, a oneof member, a
  map entry's message value) that occurs more than once is merged as the spec
  says, over all its occurrences; a closed enum's non-member number is kept as
  an unknown field with the bytes the Python parser keeps; a string of a field
  that keeps any bytes (proto2, ``utf8_validation = NONE``) is decoded with
  ``surrogateescape`` as Python decodes it; a class with extension ranges reads
  the extensions registered for it at that moment, message sets included
  (``extensions.c``, the rules of :mod:`pbj.codec.extensions`). An input that
  is an error raises, from C, the :class:`~pbj.DecodeError` the Python parser
  raises (text, field path, byte offset: the wire walker's one error exit,
  ``walk.c``), with no Python parse; it hands to Python only nesting deeper
  than 200 levels. A ``float`` NaN keeps its bits as
  :mod:`pbj.codec.float32` holds them.
* ``encode`` (forward writer, sizes cached on the objects as the Python writer
  caches them) and ``write_reverse``: every field kind and the extensions (each
  holder written with its own plan, where its range falls; a holder's class is
  compiled when its value is attached, so the first write of an extension runs
  in C too), and a string that keeps bytes that are not UTF-8 (its lone
  surrogates written as those bytes, ``surrogateescape``, from a bytes object
  the writer holds until it is copied). They hand to Python an object holding a
  value the Python writer refuses (an unexpected Python type, a value out of its
  type's range, a surrogate a string cannot hold: Python raises the error) and
  nesting deeper than 200 levels, nothing else.

:func:`explain_engine` says which engine runs a class, and why.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

from pbj import engines, scalars
from pbj.codec import plan as P
from pbj.codec.compiler import register_engine
from pbj.errors import DecodeError
from pbj.platforms import warn_if_native_missing
from pbj.schema import EMPTY_MAP, FrozenMap, OneOf, info

__all__ = ["engine", "use_engine", "available", "adopt", "native_plan", "explain_engine", "EngineChoice",
           "ENGINE_ENV", "NATIVE", "NativeMessage", "READS", "ARROW_KINDS"]

#: The environment variable that selects the engine at import: ``python`` or ``native``.
ENGINE_ENV = "PBJ_ENGINE"


class NativeMessage(NamedTuple):
    """What :func:`native_plan` sends for one class: its plan, as it is, and what its slot names flatten to.

    Attributes:
        plan: the class's :class:`pbj.codec.plan.MessagePlan` (the same object).
        slot_descriptors: the slots base's member descriptor of each name of ``plan.slots``, in order.
        unknown_slot, size_slot: those of ``_pbj_unknown`` and ``_pbj_size``.
        extensions_slot: that of ``_pbj_extensions`` (a class with extension ranges), else ``None``.
        holder_plan: with extension ranges, ``_holder_plan`` (compiles an extension's holder class the
            engine meets before it is compiled), else ``None``.
    """

    plan: P.MessagePlan
    slot_descriptors: tuple[Any, ...]
    unknown_slot: Any
    size_slot: Any
    extensions_slot: Any
    holder_plan: Any


#: The attributes of each record the engine reads, by name (its positions go to the engine in
#: :func:`layout`, which checks each against its own at import).
READS: dict[str, tuple[str, ...]] = {
    "FieldPlan": ("name", "number", "slot", "label", "type", "group", "tag", "end_tag", "width", "sub", "closed",
                  "key", "oneof", "utf8", "key_tag", "value_tag", "value_default", "enum_members"),
    "MessagePlan": ("cls", "fields", "writes", "oneofs", "dispatch", "extension_ranges", "message_set",
                    "slot_kinds", "slot_defaults", "extension_number", "extension_registry"),
    "OneofPlan": ("slot", "members"),
    "NativeMessage": NativeMessage._fields,
}

#: The node kinds of a column plan (``pbj.arrow.native``, ``arrow.c``), in the order of their codes.
ARROW_KINDS = ("scalar", "enum", "struct", "oneof", "list", "map", "time", "wrapper", "encoded", "present")

_RECORDS: dict[str, Any] = {"FieldPlan": P.FieldPlan, "MessagePlan": P.MessagePlan, "OneofPlan": P.OneofPlan,
                            "NativeMessage": NativeMessage}


def layout() -> dict[str, int]:
    """Every code and record position the engine reads, by name, as the Python side sends them.

    Handed to the extension at import, which refuses (``ImportError``) unless each is its own:
    the type codes (:mod:`pbj.scalars`, ``message``), labels, parse forms, write steps and slot
    kinds (:mod:`pbj.codec.plan`), the column plan's node kinds (``arrow.<kind>``), and for each
    record the engine reads (``FieldPlan``, ``MessagePlan``, ``OneofPlan``, ``NativeMessage``) the
    position of each attribute it reads (``FieldPlan.number`` ...) and the record's size.
    """
    out = {row.name: row.code for row in scalars.BY_CODE}
    out["message"] = P.MESSAGE
    out.update(IMPLICIT=P.IMPLICIT, EXPLICIT=P.EXPLICIT, REPEATED=P.REPEATED, PACKED=P.PACKED, MAP=P.MAP,
               MEMBER=P.MEMBER, VALUE=P.VALUE, PACKED_RUN=P.PACKED_RUN, GROUP_START=P.GROUP_START, FIELD=P.FIELD,
               RUN=P.RUN, EXTENSIONS=P.EXTENSIONS, S_SINGULAR=P.S_SINGULAR, S_REPEATED=P.S_REPEATED, S_MAP=P.S_MAP,
               S_ONEOF=P.S_ONEOF)
    out.update({f"arrow.{kind}": code for code, kind in enumerate(ARROW_KINDS)})
    for record, names in READS.items():
        fields = _RECORDS[record]._fields
        out.update({f"{record}.{name}": fields.index(name) for name in names})
        out[f"{record}.size"] = len(fields)
    return out


try:
    from pbj._native import _engine  # type: ignore[attr-defined]
except ImportError:  # not built (no compiler at install time): the pure-Python engine runs
    _engine = None
    NATIVE: engines.Engine | None = None
    warn_if_native_missing()  # one line, where a binary wheel with the engine exists (pbj.platforms)
else:
    _engine.setup(FrozenMap, OneOf, EMPTY_MAP, DecodeError, layout())  # ImportError: built for another plan
    #: The native engine's entry points (``None`` when it is not built).
    NATIVE = engines.Engine("native", _engine.decode, _engine.encode, _engine.write_reverse)
    engines.ENTRY_POINTS = (NATIVE, _engine.entry_points)  # pbj.api's decode and encode in C (entry.c)

#: The attributes of the plan's records the engine knows: those it reads, and those it needs not read
#: (names for people, what another attribute carries for it: the enum class's members, the defaults
#: of the slots; the writers read the stored state, None when unset, never the declared default).
_FIELD_PLAN = frozenset(READS["FieldPlan"]) | {"proto_name", "idx", "enum", "default", "declared_default"}
_MESSAGE_PLAN = frozenset(READS["MessagePlan"]) | {"idx", "full_name", "slots_class", "slots", "leaf",
                                                    "read_by_slot"}


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


def _field(f: P.FieldPlan) -> str | None:
    """Why the engine declines field plan ``f``, or ``None``."""
    if not _extras_unset(f, _FIELD_PLAN):
        return f"field {f.name}: the plan has a field record the native engine does not know"
    if f.group and f.type != P.MESSAGE:
        return f"field {f.name}: a group that is not a message"
    return None


def _holder_plan(ext: Any) -> Any:
    """The native plan of an extension's holder class (compiled now if need be), or ``None``.

    Called by the engine (decode.c, through the message record) when it meets a registered
    extension whose holder class has no codec yet.
    """
    from pbj.codec.compiler import codec_of
    return codec_of(ext.holder).native


def _flatten(mp: P.MessagePlan) -> NativeMessage | str:
    """The record of ``mp`` the engine reads (see :func:`native_plan`), or the reason it declines it."""
    if not _extras_unset(mp, _MESSAGE_PLAN):
        return "its plan has a record the native engine does not know"
    cls, base = mp.cls, mp.slots_class
    if not issubclass(cls, base) or cls.__basicsize__ != base.__basicsize__:
        return "its class adds storage to its slots base"
    try:
        descrs = tuple(base.__dict__[name] for name in mp.slots)
        unknown, size = base.__dict__["_pbj_unknown"], base.__dict__["_pbj_size"]
        ext_slot = base.__dict__["_pbj_extensions"] if mp.extension_ranges else None
    except KeyError as missing:
        return f"its slots base has no slot {missing}"
    if -1 in mp.slot_kinds:
        return "a slot holds no field"
    for f in mp.fields:
        why = _field(f)
        if why is not None:
            return why
    return NativeMessage(mp, descrs, unknown, size, ext_slot, _holder_plan if mp.extension_ranges else None)


def native_plan(mp: P.MessagePlan) -> NativeMessage | None:
    """What the C engine reads of one class's plan (``plan.c``), or ``None`` to decline.

    The plan's own records, as they are (the engine reads the attributes :data:`READS`
    names, at the positions :func:`layout` gave it), and what its slot names flatten to
    (the slots base's member descriptors): this adapter derives nothing else. Declines a
    plan that has fields this module does not know with a value set (a newer plan
    feature: the pure-Python engine handles that class).
    """
    flat = _flatten(mp)
    return None if isinstance(flat, str) else flat


class EngineChoice(NamedTuple):
    """Which engine runs a message class, and why (:func:`explain_engine`).

    Attributes:
        engine: ``"native"`` or ``"python"``.
        reason: one sentence saying why.
    """

    engine: str
    reason: str


def explain_engine(cls: type) -> EngineChoice:
    """Which engine encodes and decodes message class ``cls``, and why.

    Compiles the class's codec if it has none yet. ``"native"``: the C engine
    runs every decode and encode of the class (an input that is an error raises its
    :class:`~pbj.DecodeError` from C, as the Python parser words it); it hands to the
    pure-Python engine only an object holding a value the writers refuse
    (:class:`~pbj.EncodeError`), and nesting deeper than the engine's own 200 levels:
    strings that keep bytes that are not UTF-8 and the first write of an extension
    are written in C.
    ``"python"``: the extension is not built, the pure-Python engine was chosen
    (``PBJ_ENGINE=python`` or :func:`use_engine`), or the engine declines the class
    (the reason names what it does not handle, or the class it reaches that it declines).

    Args:
        cls: a ``@pbj.message`` class (or a loaded one).

    Returns:
        An :class:`EngineChoice` ``(engine, reason)``.

    Raises:
        TypeError: ``cls`` is not a pbj message class.
        SchemaError: the class cannot be compiled (as for its first encode or decode).
    """
    from pbj.codec.compiler import codec_of
    if not isinstance(cls, type) or getattr(cls, "__pbj_info__", None) is None:
        raise TypeError(f"{cls!r} is not a pbj message class")
    name = info(cls).full_name
    codec = codec_of(cls)
    if _engine is None:
        return EngineChoice("python", "the native engine is not built (no C compiler when pbj was installed)")
    if engine() != "native":
        return EngineChoice("python", "the pure-Python engine is selected (PBJ_ENGINE=python or use_engine)")
    if codec.native is not None:
        return EngineChoice("native", f"{name}: the native engine runs its plan and every class it reaches")
    return EngineChoice("python", _why_declined(cls, set()))


def _why_declined(cls: type, seen: set[type]) -> str:
    """The reason the engine declines ``cls`` (its own plan, or the first declined class it reaches)."""
    from pbj.codec.compiler import codec_of
    seen.add(cls)
    codec = codec_of(cls)
    name = info(cls).full_name
    flat = _flatten(codec.plan)
    if isinstance(flat, str):
        return f"{name}: {flat}"
    for f in codec.plan.fields:
        if f.type != P.MESSAGE:
            continue
        sub = _sub_class(cls, f)
        if sub is None or sub in seen:
            continue
        if codec_of(sub).native is None:
            return f"{name}.{f.name} reaches a class the engine declines: {_why_declined(sub, seen)}"
    return f"{name}: the engine refused its plan (plan.c)"


def _sub_class(cls: type, f: P.FieldPlan) -> type | None:
    """The message class field ``f`` of ``cls`` holds (a map's value class)."""
    mi = info(cls)
    for fi in (*mi.fields, *(m for o in mi.oneofs for m in o.members)):
        if fi.number == f.number:
            t = fi.map_value if fi.is_map else fi.type
            return t if isinstance(t, type) and hasattr(t, "__pbj_info__") else None
    return None


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
