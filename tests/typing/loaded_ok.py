"""A correct user program with loaded classes and their stubs (``pbj stubs``): nothing is reported."""

from __future__ import annotations

from typedemo import namespace
from typedemo.demo.common import Money
from typedemo.demo.v1 import Account, Kind

import pbj

acct = Account(name="ann", balance=5, tags=["a", "b"], limits={"day": 3}, kind=Kind.KIND_USER, maybe=None,
               parent=Account(name="root"), contact=pbj.OneOf("phone", Account.Phone(number="1")),
               money=Money(units=1, currency="CHF"), blob=bytearray(b"x"), self=3)
data: bytes = pbj.encode(acct)
back: Account = pbj.decode(Account, data)
tags: tuple[str, ...] = back.tags
limit: int = back.limits["day"]
maybe: int | None = back.maybe
parent_name: str = back.parent.name if back.parent is not None else ""
units: int = back.money.units if back.money is not None else 0
blob: bytes = back.blob
own: int = back.self
if back.contact is not None:
    contact: str | Account.Phone = back.contact.value
same: type[Account] = namespace.message_class("demo.v1.Account", Account)
changed: Account = pbj.replace(back, name="bob")
assert same is Account and pbj.decode(same, data) == acct
print(tags, limit, maybe, parent_name, units, blob, own, changed)
# a repeated string field takes any iterable of str but a str: sets, generators, dict views, tuples
for texts in ({"a"}, (t for t in "ab"), {"k": "v"}.values(), {"k": 1}.keys(), ("a",), iter(["a"])):
    Account(tags=texts)
