"""Narrow tables, one per kind: ``split=`` of :func:`pbj.arrow.to_arrow` and :func:`pbj.arrow.decode_to_arrow`.

A oneof whose members are the kinds of a record (``BlockItem.item``: a
transaction, a state change, a result ...) makes one wide table (every
member's columns in every row). Split at that oneof, each member gets a table
of its own, holding only the rows that set it:

* ``row``: the index of the message in the input (``int64``), and, for each
  repeated field the path crosses, ``<field>_index``: the element's position;
* the other fields of the message holding the oneof (all of them, or those
  ``keep`` names), with the types they have in the wide table;
* the member's own columns: a message member's fields (the columns
  :func:`pbj.arrow.arrow_schema` gives its class), any other member as one
  column named after it.

A **split path** is a dotted path of ``.proto`` (or attribute) names from the
class to a oneof: ``"item"`` (a oneof of the class), ``"items.item"`` (the
element oneof of a repeated message field), and through oneof members:
``"item.state_changes.state_changes.change_operation"`` splits the oneof of
each element of ``StateChanges.state_changes``, in the items whose ``item`` is
``state_changes``. The tables are named by the members along the path and the
member itself (``"state_changes"``, ``"state_changes.map_update"``). Several
paths may be given: a column that a deeper path goes through is left out of
the shallower table (its values are in the deeper tables, under the same
``row`` and indexes), so each value is in one table.

Two ways to the same tables: from message objects (:func:`tables_of_messages`)
and from encoded messages (:func:`tables_of_payloads`), which cuts each kind's
bytes out of the payloads at the wire level and decodes them per kind with
:func:`pbj.arrow.decode_to_arrow` (on the native engine: no message objects for
the members' columns). Input it does not cut (groups on the path, any
malformed encoding) is decoded whole and split as objects, which raises the
decoder's error.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from pbj import wire
from pbj.arrow import columns as col
from pbj.arrow.lost import note, note_unknown
from pbj.arrow.mapping import Options, column_of, maps_to_struct, partial_plan_of
from pbj.schema import OneofInfo, info

__all__ = ["SplitPlan", "split_plan", "tables_of_messages", "tables_of_payloads"]


class _Node:
    """A message on a split path: its class, the fields and oneofs the paths go through."""

    def __init__(self, cls: type, keys: list[str], kind: list[str]) -> None:
        self.cls = cls
        self.keys = keys                 # the key columns of the tables below (row, <field>_index ...)
        self.kind = kind                 # the member names crossed so far
        #: attribute -> (child node, repeated) for the message fields the paths go through
        self.fields: dict[str, tuple[_Node, bool]] = {}
        self.oneofs: dict[str, _OneofNode] = {}
        mi = info(cls)
        self.full_name = mi.full_name
        self.lost_key = (mi.full_name, bool(mi.extension_ranges))
        self.field_infos = {f.name: f for f in mi.fields}
        self.oneof_infos = {o.name: o for o in mi.oneofs}
        #: ``.proto`` name -> attribute, of the fields and oneofs
        self.by_name = {f.proto_name or f.name: f.name for f in mi.fields}
        self.by_name.update({o.name: o.name for o in mi.oneofs})
        #: field number -> (attribute, member attribute or None) of every field of the class
        self.numbers: dict[int, tuple[str, str | None]] = {f.number: (f.name, None) for f in mi.fields}
        for o in mi.oneofs:
            for m in o.members:
                self.numbers[m.number] = (o.name, m.name)

    def path_attrs(self) -> frozenset[str]:
        """The attributes whose values the paths take to other tables (left out of this message's columns)."""
        return frozenset(self.fields) | frozenset(self.oneofs)


class _OneofNode:
    """A oneof on a split path: split here (its members make tables), or only gone through to deeper ones."""

    def __init__(self, holder: _Node, oneof: OneofInfo, options: Options) -> None:
        self.holder = holder
        self.info = oneof
        self.split = False
        self.members: dict[str, _Node] = {}   # member attribute -> the node a path continues in
        self.order = [m.name for m in oneof.members]
        self.proto_names = {m.name: m.proto_name or m.name for m in oneof.members}
        self.types = {m.name: m.type for m in oneof.members}
        trail = (holder.cls,)
        #: member attribute -> its message class when it is a struct of its fields (else its one column is built)
        self.structs = {m.name: m.type for m in oneof.members
                        if isinstance(m.type, type) and not isinstance(m.type, enum.EnumMeta)
                        and maps_to_struct(m.type, trail, options)}


class SplitPlan:
    """The resolved split paths of a class: the tree of nodes and, per table, how to build it."""

    def __init__(self, root: _Node, keep: Sequence[str] | None, options: Options) -> None:
        self.root = root
        self.keep = None if keep is None else tuple(keep)
        self.options = options
        self.splits: list[_OneofNode] = []
        self._collect(root)

    def _collect(self, node: _Node) -> None:
        for child, _ in node.fields.values():
            self._collect(child)
        for on in node.oneofs.values():
            if on.split:
                self.splits.append(on)
            for sub in on.members.values():
                self._collect(sub)

    def kind(self, on: _OneofNode, member: str) -> str:
        return ".".join([*on.holder.kind, on.proto_names[member]])

    def holder_columns(self, on: _OneofNode) -> list[tuple[str, Any, col.Column]]:
        """``(name, getter, column)`` of the holder's fields each table of ``on`` keeps."""
        plan = partial_plan_of(on.holder.cls, self.options, on.holder.path_attrs())
        return [(name, getter, column) for name, attr, getter, column in zip(
                    plan.names, plan.attrs, plan.getters, plan.columns, strict=True)
                if self.keep is None or name in self.keep or attr in self.keep]

    def member_columns(self, on: _OneofNode,
                       member: str) -> tuple[col.Struct | None, list[tuple[str, Any, col.Column]]]:
        """The member's class plan (None: not a struct of its fields) and its ``(name, getter, column)``."""
        mcls = on.structs.get(member)
        if mcls is None:
            column = column_of(on.types[member], (on.holder.cls,), self.options, nullable=True)
            return None, [(on.proto_names[member], None, column)]
        sub = on.members.get(member)
        plan = partial_plan_of(mcls, self.options, sub.path_attrs() if sub is not None else frozenset())
        return plan, list(zip(plan.names, plan.getters, plan.columns, strict=True))

    def holder_names(self, on: _OneofNode) -> set[str]:
        """The names (``.proto`` and attribute) of the fields of the message holding ``on``."""
        return set(on.holder.by_name) | set(on.holder.by_name.values())

    def schema(self, on: _OneofNode, member: str) -> pa.Schema:
        plan, members = self.member_columns(on, member)
        fields = [pa.field(k, pa.int64(), nullable=False) for k in on.holder.keys]
        fields += [pa.field(n, c.type, nullable=c.nullable) for n, _, c in self.holder_columns(on)]
        fields += [pa.field(n, c.type, nullable=c.nullable) for n, _, c in members]
        full_name = info(plan.cls).full_name if plan is not None else on.holder.full_name
        return pa.schema(fields, metadata={"pbj.message": full_name, "pbj.kind": self.kind(on, member)})


def split_plan(cls: type, paths: str | Sequence[str], keep: Sequence[str] | None, options: Options) -> SplitPlan:
    """Resolve ``paths`` on ``cls`` (see the module docstring).

    Raises:
        ValueError: a path is empty, names no field, oneof or member of the
            class it reaches, crosses a field that is not a message (or a map),
            ends elsewhere than at a oneof, or two columns of a table would
            have one name (the text names the path and the name).
    """
    if isinstance(paths, str):
        paths = [paths]
    if not paths:
        raise ValueError("split needs at least one path (a oneof, e.g. split='item')")
    root = _Node(cls, ["row"], [])
    for path in paths:
        _resolve(root, path, options)
    plan = SplitPlan(root, keep, options)
    if keep is not None:
        for name in keep:
            if not any(name in plan.holder_names(on) for on in plan.splits):
                raise ValueError(f"keep: {name!r} is no field of a message holding a split oneof")
    for on in plan.splits:
        for member in on.order:
            names = [f.name for f in plan.schema(on, member)]
            twice = sorted({n for n in names if names.count(n) > 1})
            if twice:
                raise ValueError(f"split {plan.kind(on, member)!r}: the table would have two columns named "
                                 f"{twice[0]!r} (an index, a kept field and a member field; keep= leaves fields out)")
    return plan


def _resolve(root: _Node, path: str, options: Options) -> None:
    parts = path.split(".")
    if not all(parts):
        raise ValueError(f"split path {path!r}: an empty name")
    node = root
    i = 0
    while i < len(parts):
        name = parts[i]
        at = ".".join(parts[:i + 1])
        attr = node.by_name.get(name, name if name in node.field_infos or name in node.oneof_infos else None)
        if attr is None:
            raise ValueError(f"split path {path!r}: {node.full_name} has no field or oneof {name!r}")
        oneof = node.oneof_infos.get(attr)
        if oneof is not None:
            on = node.oneofs.get(attr)
            if on is None:
                on = node.oneofs[attr] = _OneofNode(node, oneof, options)
            if i == len(parts) - 1:
                on.split = True
                return
            member = _member(on, parts[i + 1])
            if member is None:
                raise ValueError(f"split path {path!r}: the oneof {at!r} has no member {parts[i + 1]!r}")
            mcls = on.structs.get(member)
            if mcls is None:
                raise ValueError(f"split path {path!r}: the member {parts[i + 1]!r} is no message of columns")
            sub = on.members.get(member)
            if sub is None:
                sub = on.members[member] = _Node(mcls, node.keys, [*node.kind, on.proto_names[member]])
            node = sub
            i += 2
            continue
        if i == len(parts) - 1:
            raise ValueError(f"split path {path!r}: {at!r} is no oneof (a split path ends at a oneof)")
        fi = node.field_infos[attr]
        if (fi.is_map or fi.group or not isinstance(fi.type, type) or isinstance(fi.type, enum.EnumMeta)
                or not maps_to_struct(fi.type, (node.cls,), options)):
            raise ValueError(f"split path {path!r}: {at!r} is no message field (nor a repeated one)")
        child = node.fields.get(attr)
        if child is None:
            proto = fi.proto_name or fi.name
            keys = [*node.keys, f"{proto}_index"] if fi.repeated else node.keys
            child = (_Node(fi.type, keys, node.kind), fi.repeated)
            node.fields[attr] = child
        node = child[0]
        i += 1
    raise AssertionError("unreachable")  # pragma: no cover


def _member(on: _OneofNode, name: str) -> str | None:
    for attr, proto in on.proto_names.items():
        if name in (attr, proto):
            return attr
    return None


# ---- from message objects ----

def tables_of_messages(plan: SplitPlan, messages: Sequence[Any]) -> dict[str, pa.Table]:
    """The split tables of ``messages`` (of the plan's class), one per member of each split oneof."""
    rows: dict[tuple[int, str], list[tuple[tuple[int, ...], Any, Any]]] = {}
    for i, m in enumerate(messages):
        _walk(plan.root, m, (i,), rows)
    out: dict[str, pa.Table] = {}
    for on in plan.splits:
        for member in on.order:
            entries = rows.get((id(on), member), [])
            out[plan.kind(on, member)] = _table(plan, on, member, entries, objects=True)
    return out


def _walk(node: _Node, msg: Any, keys: tuple[int, ...], rows: dict) -> None:
    note(*node.lost_key, [msg])
    for attr, (child, repeated) in node.fields.items():
        value = getattr(msg, attr)
        if repeated:
            for j, element in enumerate(value):
                _walk(child, element, (*keys, j), rows)
        elif value is not None:
            _walk(child, value, keys, rows)
    for attr, on in node.oneofs.items():
        chosen = getattr(msg, attr)
        if chosen is None:
            continue
        if on.split:
            rows.setdefault((id(on), chosen.which), []).append((keys, msg, chosen.value))
        sub = on.members.get(chosen.which)
        if sub is not None:
            _walk(sub, chosen.value, keys, rows)


def _table(plan: SplitPlan, on: _OneofNode, member: str, entries: list, *, objects: bool,
           member_table: pa.Table | None = None) -> pa.Table:
    """One member's table from ``entries`` ``(keys, holder, value)``: objects, or (wire path) decoded parts."""
    schema = plan.schema(on, member)
    arrays: list[pa.Array] = [pa.array([e[0][k] for e in entries], pa.int64()) for k in range(len(on.holder.keys))]
    holders = [e[1] for e in entries]
    for name, getter, column in plan.holder_columns(on):
        arrays.append(column.to_array([getter(h) for h in holders], [name]))
    mplan, members = plan.member_columns(on, member)
    if member_table is not None:
        arrays.extend(member_table.column(name).combine_chunks() for name, _, _ in members)
    else:
        values = [e[2] for e in entries]
        if mplan is not None:
            if objects and member not in on.members:  # a member no path goes through: its messages are counted here
                note(*mplan.lost_key, values)
            for name, getter, column in members:
                arrays.append(column.to_array(list(map(getter, values)), [name]))
        else:
            (name, _, column), = members
            arrays.append(column.to_array(values, [name]))
    return pa.Table.from_arrays(arrays, schema=schema)


# ---- from encoded messages ----

class _Uncut(Exception):
    """The wire-level cut does not take this input: decode it whole and split the objects."""


def tables_of_payloads(plan: SplitPlan, payloads: Sequence[bytes | bytearray | memoryview],
                       max_depth: int, unknown_fields: str = "warn") -> dict[str, pa.Table]:
    """The split tables of encoded messages, as :func:`tables_of_messages` gives them for the decoded ones.

    Raises:
        DecodeError: a payload is not a valid encoding (its path starts with the payload's index).
        EncodeError: a value Arrow cannot hold (see :func:`pbj.arrow.to_arrow`).
    """
    from pbj.api import decode
    from pbj.arrow.convert import decode_to_arrow
    from pbj.errors import DecodeError

    rows: dict[tuple[int, str], list[tuple[tuple[int, ...], bytes, bytes]]] = {}
    try:
        for i, data in enumerate(payloads):
            _cut(plan.root, bytes(data), (i,), rows, max_depth)
        out: dict[str, pa.Table] = {}
        for on in plan.splits:
            holder_cls = on.holder.cls
            for member in on.order:
                entries = rows.get((id(on), member), [])
                mplan, _ = plan.member_columns(on, member)
                holders = [decode(holder_cls, e[1], max_depth=max_depth) for e in entries] \
                    if plan.holder_columns(on) else [None] * len(entries)
                if mplan is None:  # a scalar, enum, well-known or past-depth member: decode its field in the holder
                    values = [getattr(decode(holder_cls, e[2], max_depth=max_depth), on.info.name).value
                              for e in entries]
                    objs = [(e[0], h, v) for e, h, v in zip(entries, holders, values, strict=True)]
                    out[plan.kind(on, member)] = _table(plan, on, member, objs, objects=False)
                elif member in on.members:  # a path goes on through it: its other fields, as objects
                    values = [decode(mplan.cls, e[2], max_depth=max_depth) for e in entries]
                    objs = [(e[0], h, v) for e, h, v in zip(entries, holders, values, strict=True)]
                    out[plan.kind(on, member)] = _table(plan, on, member, objs, objects=False)
                else:
                    table = decode_to_arrow(mplan.cls, [e[2] for e in entries], max_depth=max_depth,
                                            unknown_fields=unknown_fields, **_option_args(plan.options))
                    objs = [(e[0], h, None) for e, h in zip(entries, holders, strict=True)]
                    out[plan.kind(on, member)] = _table(plan, on, member, objs, objects=False, member_table=table)
        return out
    except (_Uncut, DecodeError, IndexError):
        messages: list[Any] = []
        for i, data in enumerate(payloads):
            try:
                messages.append(decode(plan.root.cls, data, max_depth=max_depth))
            except DecodeError as exc:
                exc.path = [i, *exc.path]
                raise
        return tables_of_messages(plan, messages)


def _option_args(options: Options) -> dict[str, Any]:
    return {"enums": options.enums, "well_known_types": options.well_known_types,
            "recursion_depth": options.recursion_depth}


def _cut(node: _Node, data: bytes, keys: tuple[int, ...], rows: dict, depth: int) -> bytes:
    """Walk one encoded message of ``node``'s class; file its split rows; return its fields the paths leave.

    A message field seen twice is merged (its encodings joined, "Last One
    Wins" for singular messages means merging), a oneof member replaced by
    another is dropped, repeated elements are taken in order; unknown fields
    are counted as left out.
    """
    if depth <= 0:
        raise _Uncut
    pos, end = 0, len(data)
    kept: list[bytes] = []
    singular: dict[str, list[bytes]] = {}
    elements: dict[str, list[bytes]] = {}
    chosen: dict[str, tuple[str, list[bytes]]] = {}
    unknown: list[bytes] = []
    numbers = node.numbers
    while pos < end:
        start = pos
        tag, pos = wire.read_tag(data, pos)
        found = numbers.get(tag >> 3)
        wire_type = tag & 7
        if wire_type == wire.WIRE_LEN:
            n, body = wire.read_size(data, pos)
            pos = body + n
            if pos > end:
                raise _Uncut
        else:
            body = -1
            pos = wire.skip_field(data, pos, tag, end, depth)
        if found is None:
            unknown.append(data[start:pos])
            continue
        attr, member = found
        if member is not None and attr in node.oneofs:
            on = node.oneofs[attr]
            struct = member in on.structs
            if body < 0 and struct:  # a group: the cut takes a message member's LEN value only
                raise _Uncut
            value = data[body:pos] if struct else data[start:pos]
            previous = chosen.get(attr)
            if previous is not None and previous[0] == member:
                previous[1].append(value)
            else:
                chosen[attr] = (member, [value])
            continue
        if attr in node.fields:
            if body < 0:
                raise _Uncut
            if node.fields[attr][1]:
                elements.setdefault(attr, []).append(data[body:pos])
            else:
                singular.setdefault(attr, []).append(data[body:pos])
            continue
        kept.append(data[start:pos])
    note_unknown(node.full_name, unknown)
    holder_bytes = b"".join(kept)
    for attr, (child, repeated) in node.fields.items():
        if repeated:
            for j, element in enumerate(elements.get(attr, ())):
                _cut(child, element, (*keys, j), rows, depth - 1)
        elif attr in singular:
            _cut(child, b"".join(singular[attr]), keys, rows, depth - 1)
    for attr, on in node.oneofs.items():
        got = chosen.get(attr)
        if got is None:
            continue
        member, values = got
        sub = on.members.get(member)
        value = b"".join(values)
        if sub is not None:
            value = _cut(sub, value, keys, rows, depth - 1)
        if on.split:
            rows.setdefault((id(on), member), []).append((keys, holder_bytes, value))
    return holder_bytes
