"""A correct user program with declared classes: mypy and pyright report nothing."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence

import pbj


class Kind(enum.IntEnum):
    UNSPECIFIED = 0
    USER = 1


@pbj.message
class Money:
    units: int = pbj.field(1, "int64")
    currency: str = pbj.field(2, "string")


@pbj.message(full_name="demo.Account")
class Account:
    name: str = pbj.field(1, "string")
    balance: int = pbj.field(2, "int64")
    tags: tuple[str, ...] = pbj.field(3, "string", repeated=True)
    aliases: Sequence[str] = pbj.field(4, "string", repeated=True)
    limits: Mapping[str, int] = pbj.map_field(5, "string", "int32")
    kind: Kind = pbj.field(6, Kind)
    maybe: int | None = pbj.field(7, "int32", optional=True)
    money: Money | None = pbj.field(8, Money)
    ratio: float = pbj.field(9, "double")
    contact: pbj.OneOf[str | Money] | None = pbj.oneof(email=(10, "string"), deposit=(11, Money))


acct = Account(name="ann", balance=5, tags=("a", "b"), aliases=["x"], limits={"day": 3}, kind=Kind.USER,
               maybe=None, money=Money(units=1, currency="CHF"), ratio=1, contact=pbj.OneOf("email", "a@b"))
data: bytes = pbj.encode(acct)
back: Account = pbj.decode(Account, data)
name: str = back.name
first_tag: str = back.tags[0]
limit: int = back.limits["day"]
units: int = back.money.units if back.money is not None else 0
kind: Kind = back.kind
maybe: int | None = back.maybe
if back.contact is not None:
    which: str = back.contact.which
    value: str | Money = back.contact.value
match back.contact:
    case pbj.OneOf("email", str() as email):
        print(email.upper())
    case pbj.OneOf("deposit", Money() as m):
        print(m.units)
changed: Account = pbj.replace(back, name="bob")
# (attrs.evolve works the same at run time, but mypy refuses it: pbj classes are not attrs classes to it)
size: int = pbj.encoded_size(changed)
print(name, first_tag, limit, units, kind, maybe, size)


@pbj.message(full_name="demo.Box", syntax="proto2", extensions=[range(100, 200), 300])
class Box:
    size: int | None = pbj.field(1, "int32", optional=True)


weight: pbj.Extension[int | None] = pbj.extension(Box, 100, "int32", name="demo.weight")
box: Box = pbj.with_extensions(Box(size=1), {weight: 5})
grams: int | None = pbj.get_extension(box, weight)
present: bool = pbj.has_extension(box, weight)
every: Mapping[pbj.Extension[object], object] = pbj.extensions_of(box)
print(grams, present, len(every))
