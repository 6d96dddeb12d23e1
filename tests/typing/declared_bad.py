"""Wrong user programs with declared classes: each line marked ``# error`` is reported, no other."""

from __future__ import annotations

import enum
from collections.abc import Mapping

import pbj


class Kind(enum.IntEnum):
    UNSPECIFIED = 0
    USER = 1


@pbj.message
class Money:
    units: int = pbj.field(1, "int64")
    currency: str = pbj.field(2, "string")


@pbj.message
class Account:
    name: str = pbj.field(1, "string")
    tags: tuple[str, ...] = pbj.field(2, "string", repeated=True)
    money: Money | None = pbj.field(3, Money)
    contact: pbj.OneOf[str | Money] | None = pbj.oneof(email=(4, "string"), deposit=(5, Money))
    kind: Kind = pbj.field(6, Kind)
    maybe: int | None = pbj.field(7, "int32", optional=True)
    limits: Mapping[str, int] = pbj.map_field(8, "string", "int32")


Account(nmae="ann")  # error: a wrong keyword
Account(name=5)  # error: a wrong field type
Account(money=Account())  # error: a message of the wrong class
acct = Account()
acct.name = "bob"  # error: assigning to a frozen field
Account(contact=pbj.OneOf("email", 5))  # error: a wrong oneof member value
wrong: Money = pbj.decode(Account, b"")  # error: the result of decode used as the wrong class
count: int = pbj.decode(Money, b"").currency  # error: a field read as the wrong type
units = pbj.replace(acct, name="x").units  # error: replace keeps the class
Account(tags=(1,))  # error: a repeated field's item of the wrong type
Account(kind="USER")  # error: an enum field given a str
Account(limits={"day": "3"})  # error: a map value of the wrong type
exact: int = Account().maybe  # error: an optional field is int | None


@pbj.message(full_name="demo.Box", syntax="proto2", extensions=range(100, 200))
class Box:
    size: int | None = pbj.field(1, "int32", optional=True)


weight: pbj.Extension[int] = pbj.extension(Box, 100, "int32", name="demo.weight")
label: str = pbj.get_extension(Box(), weight)  # error: an extension's value read as the wrong type
other: Account = pbj.with_extensions(Box(), {weight: 5})  # error: with_extensions keeps the class
