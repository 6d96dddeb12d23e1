"""What the three emitters share: the batch being emitted and small source helpers.

An emitter is a function ``emit_*(ctx, plan) -> str`` taking an
:class:`Emit` (the batch's plan, its :class:`~pbj.codec.source.Scope` and
the name stem of every class) and one :class:`~pbj.codec.plan.MessagePlan`;
it returns source text and registers the constants it uses in the scope,
nowhere else.
"""

from __future__ import annotations

import operator
import struct
from typing import Any

from pbj import scalars
from pbj.codec.plan import (
    EXPLICIT,
    IMPLICIT,
    MAP,
    MEMBER,
    MESSAGE,
    PACKED,
    REPEATED,
    BatchPlan,
    FieldPlan,
    MessagePlan,
    row_of,
)
from pbj.codec.source import Scope, Source, attr_ok, comment
from pbj.scalars import ScalarType

__all__ = ["Emit", "FieldShapes", "kind_of", "name_of", "INT_OPS", "describe", "describe_run", "presence_test",
           "emit_field", "emit_run_head", "bytes_value", "text_size", "class_check"]

#: The operation codes of the varints the writers write as they are (no ZigZag, not ``bool``).
INT_OPS = frozenset((scalars.OP_VARINT, scalars.OP_ENUM))


def kind_of(code: int) -> ScalarType | None:
    """The scalar row of a type code, or ``None`` for :data:`~pbj.codec.plan.MESSAGE`."""
    return None if code == MESSAGE else row_of(code)


def name_of(code: int) -> str:
    """The scalar name of a type code, or ``"message"`` (for comments)."""
    return "message" if code == MESSAGE else row_of(code).name


def describe(f: FieldPlan) -> str:
    """The comment that heads a field's code: ``# memo = 6 (string)``."""
    if f.key >= 0:
        what = f"map<{row_of(f.key).name}, {name_of(f.type)}>"
    else:
        what = ("group" if f.group else name_of(f.type)) if f.type == MESSAGE or f.group else row_of(f.type).name
        if f.label in (REPEATED, PACKED):
            what = f"repeated {what}" + (", packed" if f.label == PACKED else "")
    return f"# {comment(f.proto_name)} = {f.number} ({what})"


def describe_run(plan: MessagePlan, j: int, members: tuple[int, ...]) -> str:
    """The comment that heads a oneof run's code: ``# oneof data: cryptoTransfer = 14, freeze = 15``."""
    fields = ", ".join(f"{plan.fields[i].proto_name} = {plan.fields[i].number}" for i in members)
    return comment(f"# oneof {plan.oneofs[j].name}: {fields}")


def str_encode(v: str, utf8: bool) -> str:
    """Source encoding ``str`` value ``v`` to its bytes: strict UTF-8, or (``utf8`` false:
    proto2 strings, ``utf8_validation = NONE``) with ``surrogateescape``, which gives back the
    exact bytes a non-UTF-8 value was decoded from (see :mod:`pbj.codec.plan`, ``utf8``).

    It calls ``str.encode`` itself (the helper ``_utf8``), never the value's own ``encode``: a
    ``str`` subclass stored by hand (``object.__setattr__``) cannot give bytes whose length lies."""
    return f"_utf8({v})" if utf8 else f"_utf8({v}, 'utf-8', 'surrogateescape')"


def text_size(v: str, utf8: bool) -> str:
    """Source for the number of bytes ``str`` value ``v`` encodes to (an ASCII ``str``: its length)."""
    return f"(len({v}) if _type({v}) is str and {v}.isascii() else len({str_encode(v, utf8)}))"


def bytes_value(v: str) -> str:
    """Source for the bytes of a ``bytes`` field's value ``v``, whose ``len`` is their size.

    A value stored by hand (``object.__setattr__``) may be any bytes-like object: a ``bytes``
    subclass whose ``__len__`` lies, a ``memoryview`` whose items are wider than a byte. Anything
    but an exact ``bytes`` is read through the buffer protocol (the helper ``_blob``,
    ``memoryview(v).tobytes()``), so the length written is the size of the bytes written."""
    return f"({v} if _type({v}) is bytes else _blob({v}))"


def class_check(ctx: Emit, f: FieldPlan, v: str) -> str:
    """Source refusing a sub-message ``v`` of another class than ``f``'s, by identity: one of
    another class with the same field names would be written with its other fields dropped.

    ``_type`` is the built-in ``type``: CPython 3.11 calls ``type(v)`` without looking up an
    attribute, where ``v.__class__`` is a descriptor lookup each time (and a class may override
    ``__class__``; ``type`` cannot be told otherwise)."""
    return f"if _type({v}) is not {ctx.cls(f.sub)}: raise _EncodeError('a sub-message of another class')"


def str_decode(data: str, utf8: bool) -> str:
    """Source decoding bytes ``data`` to a ``str``: strict UTF-8 (invalid input raises), or
    (``utf8`` false) with ``surrogateescape``, so any bytes are kept (see :func:`str_encode`)."""
    return f"{data}.decode()" if utf8 else f"{data}.decode('utf-8', 'surrogateescape')"


def presence_test(f: FieldPlan, v: str) -> str:
    """Source for "this singular value is written" ("Field Presence")."""
    if f.label in (EXPLICIT, MEMBER) or f.type == MESSAGE:
        return f"{v} is not None"
    if row_of(f.type).is_float:
        return f"{v} or _copysign(1.0, {v}) < 0.0"  # -0.0 is written, 0.0 is not
    return v


def raw_names(plan: MessagePlan) -> frozenset[str]:
    """The attributes of ``plan``'s fields that declare a default: read through their slots, where
    an unset field holds ``None`` (the attribute gives the default)."""
    return frozenset(f.name for f in plan.fields if f.oneof < 0 and f.declared_default is not None)


class FieldShapes:
    """What one writer emits for each shape of a present field: the Python writers' counterpart of
    the C writers' walk (``values.h``, ``pbj_step``), which :func:`emit_field` runs. A writer's
    emitter subclasses it (``pbj.codec.forward``, ``pbj.codec.reverse``).

    Each method emits code that runs with the field's value in ``v`` (read by :func:`emit_field`)
    and known to be present: written unless it is its zero value or ``None`` (:func:`presence_test`),
    a repeated field, packed run or map that is not empty.
    """

    #: The loop over a repeated field's values ``v``, each in ``x``.
    loop = "for x in v:"

    def __init__(self, ctx: Emit) -> None:
        self.ctx = ctx

    def single(self, src: Source, f: FieldPlan, v: str) -> None:
        """One value ``v`` of ``f`` with its tag: a singular value, a repeated field's element."""
        raise NotImplementedError

    def repeated(self, src: Source, f: FieldPlan) -> bool:
        """Before the loop over repeated field ``f``'s values: ``True`` if it wrote them all at once
        (no loop follows). By default, nothing: each value in the loop."""
        return False

    def packed(self, src: Source, f: FieldPlan) -> None:
        """Packed field ``f``'s values, one LEN value."""
        raise NotImplementedError

    def map(self, src: Source, f: FieldPlan) -> None:
        """Map field ``f``'s entries, in key order."""
        raise NotImplementedError


def emit_field(ctx: Emit, src: Source, plan: MessagePlan, f: FieldPlan, shapes: FieldShapes) -> None:
    """Emit a writer's code for field ``f`` of ``plan``: its comment, the read of its value into
    ``v``, its presence test ("Field Presence") and the loop over its values, each shape written
    by ``shapes``."""
    src(describe(f))
    src(f"v = {ctx.get(plan, f.name)}")
    if f.label in (EXPLICIT, IMPLICIT):
        src(f"if {presence_test(f, 'v')}:")
        with src:
            shapes.single(src, f, "v")
        return
    src("if v:")
    with src:
        if f.label == MAP:
            shapes.map(src, f)
        elif f.label == PACKED:
            shapes.packed(src, f)
        elif not shapes.repeated(src, f):
            src(shapes.loop)
            with src:
                shapes.single(src, f, "x")


def emit_run_head(ctx: Emit, src: Source, plan: MessagePlan, j: int, members: tuple[int, ...]) -> None:
    """Emit the head of a oneof run's code: its comment, the read of oneof ``j`` into ``v`` and the
    test that its set member is one of ``members`` (the caller emits the body, indented)."""
    oneof = plan.oneofs[j]
    src(describe_run(plan, j, members))
    src(f"v = {ctx.get(plan, oneof.name)}")
    if len(members) == len(oneof.members):
        src("if v is not None:")
    else:
        names = ctx.const(frozenset(plan.fields[i].name for i in members),
                          f"run_{ctx.stem(plan.idx)}__{oneof.name}_{plan.fields[members[0]].number}")
        src(f"if v is not None and v[0] in {names}:")


class Emit:
    """The emission of one batch.

    Attributes:
        batch: the batch's plan.
        scope: its namespace being built.
        stems: ``stems[i]`` is the name stem of ``batch.classes[i]``'s functions
            (``size_<stem>``, ``write_<stem>``, ``write_reverse_<stem>``, ``parse_<stem>``).
    """

    def __init__(self, batch: BatchPlan, scope: Scope, stems: list[str]) -> None:
        self.batch = batch
        self.scope = scope
        self.stems = stems
        self._rows: dict[tuple[int, int], tuple[dict[str, Any], tuple]] = {}

    def wide_row(self, plan: MessagePlan, f: FieldPlan, role: str) -> tuple[Any, tuple]:
        """The table row of role ``role`` of field ``f`` of wide message ``plan``
        (:func:`pbj.codec.wide.scalar_row`; its argument made once for all roles)."""
        row = self._rows.get((plan.idx, f.idx))
        if row is None:
            from pbj.codec.wide import scalar_row
            row = self._rows[plan.idx, f.idx] = scalar_row(plan, f, f.name in raw_names(plan))
        return row[0][role], row[1]

    def const(self, value: Any, stem: str) -> str:
        """See :meth:`Scope.const`."""
        return self.scope.const(value, stem)

    def tag(self, data: bytes) -> str:
        """The global name of tag bytes (``T_08``)."""
        return self.scope.const(data, "T")

    def tv(self, tag: bytes) -> str:
        """The table of ``tag + value`` bytes for every value below 128 (``TV_08``).

        One piece for a tag and a 1-byte varint (or length) saves the forward
        writer an append per field.
        """
        return self.scope.shared(("TV", tag), f"TV_{tag.hex()}", lambda: [tag + bytes((i,)) for i in range(128)])

    def tagged_struct(self, tag: bytes, kind: ScalarType) -> str:
        """A ``struct.Struct`` packing a field's tag bytes and one fixed-width value of scalar ``kind``."""
        fmt = "<" + "B" * len(tag) + (kind.struct_format or "")[1:]
        return self.scope.shared(("ST", tag, kind.name), f"ST_{tag.hex()}_{kind.name}", lambda: struct.Struct(fmt))

    def get(self, plan: MessagePlan, name: str, obj: str = "o") -> str:
        """Source reading attribute ``name`` of ``obj`` (through its slot if ``o.name`` cannot).

        A field with a declared default (the plan's ``declared_default``) is read through its
        slot too: ``o.name`` would give the default when the field is unset
        (:mod:`pbj.schema.presence`), and an unset field is never written.
        """
        if name in raw_names(plan):
            raw = self.scope.shared(("raw", plan.idx, name), "raw_attr",
                                    lambda: plan.slots_class.__dict__[name].__get__)
            return f"{raw}({obj})"
        if attr_ok(name):
            return f"{obj}.{name}"
        getter = self.scope.shared(("get", name), "get_attr", lambda: operator.attrgetter(name))
        return f"{getter}({obj})"

    def cls(self, index: int) -> str:
        """The global name of message class ``batch.classes[index]`` (``CLS_<stem>``)."""
        return self.scope.shared(("cls", index), f"CLS_{self.stem(index)}", lambda: self.batch.classes[index])

    def set(self, plan: MessagePlan, name: str, value: str, obj: str = "o") -> str:
        """Source storing ``value`` in attribute ``name`` of ``obj`` (a slots-base instance)."""
        if attr_ok(name):
            return f"{obj}.{name} = {value}"
        setter = self.scope.shared(("set", plan.idx, name), "set_attr",
                                   lambda: plan.slots_class.__dict__[name].__set__)
        return f"{setter}({obj}, {value})"

    def leaf(self, index: int) -> MessagePlan | None:
        """The plan of ``batch.classes[index]`` if it is a leaf to inline, else ``None``.

        A leaf to inline has 1 to 6 singular scalar fields (no strings, bytes,
        oneofs, closed enums, messages), each with a 1-byte tag: AccountID,
        Timestamp, Duration. Its parent reads and writes it without a call.
        """
        if index < len(self.batch.messages):
            mp = self.batch.messages[index]
        else:
            # compiled by an earlier batch: its codec keeps its plan (renumbered as this batch sees it)
            mp = self.batch.classes[index].__pbj_codec__.plan._replace(idx=index)
        ok = (mp.leaf and not mp.oneofs and 1 <= len(mp.fields) <= 6 and all(
            f.label in (IMPLICIT, EXPLICIT) and not f.closed and not row_of(f.type).is_len and len(f.tag) == 1
            and attr_ok(f.name) and f.declared_default is None for f in mp.fields))
        return mp if ok else None

    def extensions_helper(self, role: str) -> str:
        """The global name of :mod:`pbj.codec.extensions`' function ``role`` (``take``, ``size_range`` ...).

        Bound only in the namespace of a batch with a class with extension ranges, so the
        namespaces of all other classes stay as they were.
        """
        from pbj.codec import extensions as ext_wire
        return self.scope.shared(("extensions", role), f"ext_{role}", lambda: getattr(ext_wire, role))

    def stem(self, index: int) -> str:
        """The name stem of ``batch.classes[index]``."""
        return self.stems[index]
