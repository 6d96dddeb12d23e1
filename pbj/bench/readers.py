"""Generic "read every field" walkers, one for pbj messages and one for Google's protobuf.

The benchmark's "decode + read" times decoding followed by touching every field value of the
result, recursively, as an application that uses the whole message would. Both walkers are
written the same way so that the comparison is fair:

* a *plan* per message type, built once from the schema (pbj: :func:`pbj.schema.info`;
  Google: the message's ``DESCRIPTOR``) and cached, lists each field with how to read it;
* the walk is one interpretive loop over the plan: ``getattr`` on every field (every declared
  field, set or not: implicit-presence scalars at their zero are read too), every element of
  a repeated field, every key and value of a map, the set member of each oneof, and recursion
  into every present sub-message (Google: ``HasField`` first, since reading an unset message
  field there makes an empty one; ``WhichOneof`` for oneofs);
* the result is a checksum of what was read: integers (enums and bools included) summed, the
  lengths of strings (in characters) and bytes added, floats touched but not added. Both walkers
  give the same checksum on the same data, which the runner checks: they read the same values.

Unknown fields are not read by either. Google's upb backend decodes lazily (Python objects are
made when a field is first read), so for it "decode + read" is where the decoding cost shows.
"""

from __future__ import annotations

from typing import Any

from pbj.schema import info

__all__ = ["PbjReader", "GoogleReader", "MASK"]

#: Checksums are reduced modulo 2**64 so that both sides compare as plain ints.
MASK = (1 << 64) - 1

# value kinds
_INT, _FLOAT, _TEXT, _MSG = range(4)
# field modes
_ONE, _OPT, _REP, _MAP, _ONEOF, _SUBMSG = range(6)

_TEXT_TYPES = {"string", "bytes"}
_FLOAT_TYPES = {"double", "float"}


def _pbj_kind(t: Any) -> int:
    if isinstance(t, str):
        return _TEXT if t in _TEXT_TYPES else _FLOAT if t in _FLOAT_TYPES else _INT
    if isinstance(t, type) and issubclass(t, int):  # an IntEnum
        return _INT
    return _MSG


#: One reading step: ``(attribute or field name, mode, kind or None, extra: the map value's kind, or a oneof's
#: member kinds by name, or None)``.
_Step = tuple[str, int, int | None, int | dict[str, int] | None]


class _Reader:
    """What both readers share: the checksum of one value, and the public ``read``.

    A subclass provides ``_read(message) -> int``, which walks one message by its cached plan.
    """

    def read(self, message: Any) -> int:
        """Read every field of ``message`` recursively; return the checksum (modulo 2**64)."""
        return self._read(message) & MASK

    def _read(self, message: Any) -> int:
        raise NotImplementedError

    def _repeated(self, kind: int, values: Any) -> int:
        """The checksum of a repeated field's elements (every element is touched)."""
        total = 0
        if kind == _MSG:
            for x in values:
                total += self._read(x)
        elif kind == _INT:
            for x in values:
                total += x
        elif kind == _TEXT:
            for x in values:
                total += len(x)
        else:
            for _x in values:
                pass
        return total

    def _value(self, kind: int, v: Any) -> int:
        if kind == _INT:
            return v
        if kind == _TEXT:
            return len(v)
        if kind == _MSG:
            return self._read(v)
        return 0


class PbjReader(_Reader):
    """Reads every field of pbj messages (plans from :func:`pbj.schema.info`, cached per class)."""

    def __init__(self) -> None:
        self._plans: dict[type, tuple] = {}

    def plan(self, cls: type) -> tuple:
        """The reading plan of message class ``cls``: ``(attribute, mode, kind, extra)`` per field."""
        found = self._plans.get(cls)
        if found is not None:
            return found
        mi = info(cls)
        steps: list[_Step] = []
        for f in mi.fields:
            if f.map_key is not None:
                steps.append((f.name, _MAP, _pbj_kind(f.map_key), _pbj_kind(f.map_value)))
            elif f.repeated:
                steps.append((f.name, _REP, _pbj_kind(f.type), None))
            else:
                kind = _pbj_kind(f.type)
                mode = _SUBMSG if kind == _MSG else _OPT if f.optional else _ONE
                steps.append((f.name, mode, kind, None))
        for o in mi.oneofs:
            steps.append((o.name, _ONEOF, None, {m.name: _pbj_kind(m.type) for m in o.members}))
        plan = tuple(steps)
        self._plans[cls] = plan
        return plan

    def _read(self, obj: Any) -> int:
        plan = self._plans.get(obj.__class__) or self.plan(obj.__class__)
        total = 0
        for name, mode, kind, extra in plan:
            v = getattr(obj, name)
            if mode == _ONE:
                if kind == _INT:
                    total += v
                elif kind == _TEXT:
                    total += len(v)
            elif mode == _SUBMSG:
                if v is not None:
                    total += self._read(v)
            elif mode == _REP:
                total += self._repeated(kind, v)
            elif mode == _MAP:
                for k, x in v.items():
                    total += self._value(kind, k) + self._value(extra, x)
            elif mode == _ONEOF:
                if v is not None:
                    total += self._value(extra[v.which], v.value)
            elif v is not None:  # _OPT: explicit presence, None when absent
                total += self._value(kind, v)
        return total


def _google_kind(fd: Any) -> int:
    t = fd.type
    if t in (fd.TYPE_MESSAGE, fd.TYPE_GROUP):
        return _MSG
    if t in (fd.TYPE_STRING, fd.TYPE_BYTES):
        return _TEXT
    if t in (fd.TYPE_DOUBLE, fd.TYPE_FLOAT):
        return _FLOAT
    return _INT


class GoogleReader(_Reader):
    """Reads every field of Google protobuf messages (plans from ``DESCRIPTOR``, cached per type)."""

    def __init__(self) -> None:
        self._plans: dict[Any, tuple] = {}

    def plan(self, desc: Any) -> tuple:
        """The reading plan of a message ``Descriptor``: ``(name, mode, kind, extra)`` per field or oneof."""
        found = self._plans.get(desc)
        if found is not None:
            return found
        steps: list[_Step] = []
        oneofs: dict[str, dict[str, int]] = {}
        for fd in desc.fields:
            oneof = fd.containing_oneof
            if oneof is not None and not _synthetic(oneof):
                oneofs.setdefault(oneof.name, {})[fd.name] = _google_kind(fd)
                continue
            kind = _google_kind(fd)
            repeated = fd.label == fd.LABEL_REPEATED if not hasattr(fd, "is_repeated") else fd.is_repeated
            if kind == _MSG and repeated and fd.message_type.GetOptions().map_entry:
                entry = fd.message_type
                key = _google_kind(entry.fields_by_name["key"])
                steps.append((fd.name, _MAP, key, _google_kind(entry.fields_by_name["value"])))
            elif repeated:
                steps.append((fd.name, _REP, kind, None))
            elif kind == _MSG:
                steps.append((fd.name, _SUBMSG, kind, None))
            else:  # explicit presence (proto3 optional, proto2): read set or not (see _read)
                steps.append((fd.name, _OPT if getattr(fd, "has_presence", False) else _ONE, kind, None))
        for name, members in oneofs.items():
            steps.append((name, _ONEOF, None, members))
        plan = tuple(steps)
        self._plans[desc] = plan
        return plan

    def _read(self, msg: Any) -> int:
        desc = msg.DESCRIPTOR
        plan = self._plans.get(desc) or self.plan(desc)
        total = 0
        for name, mode, kind, extra in plan:
            if mode == _ONE:
                v = getattr(msg, name)
                if kind == _INT:
                    total += v
                elif kind == _TEXT:
                    total += len(v)
            elif mode == _SUBMSG:
                if msg.HasField(name):
                    total += self._read(getattr(msg, name))
            elif mode == _REP:
                v = getattr(msg, name)
                total += self._repeated(kind, v)
            elif mode == _MAP:
                for k, x in getattr(msg, name).items():
                    total += self._value(kind, k) + self._value(extra, x)
            elif mode == _ONEOF:
                which = msg.WhichOneof(name)
                if which is not None:
                    total += self._value(extra[which], getattr(msg, which))
            else:  # _OPT: read as pbj holds it, set or not (an unset field reads its default, as in pbj)
                total += self._value(kind, getattr(msg, name))
        return total


def _synthetic(oneof: Any) -> bool:
    """A proto3 ``optional`` field's synthetic oneof (read as a plain field)."""
    flag = getattr(oneof, "is_synthetic", None)
    if flag is not None:
        return bool(flag)
    return len(oneof.fields) == 1 and oneof.name == "_" + oneof.fields[0].name
