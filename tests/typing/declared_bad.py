"""Wrong user programs with declared classes: each line marked ``# error`` is reported, no other."""

from __future__ import annotations

import pbj


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


Account(nmae="ann")  # error: a wrong keyword
Account(name=5)  # error: a wrong field type
Account(money=Account())  # error: a message of the wrong class
acct = Account()
acct.name = "bob"  # error: assigning to a frozen field
Account(contact=pbj.OneOf("email", 5))  # error: a wrong oneof member value
wrong: Money = pbj.decode(Account, b"")  # error: the result of decode used as the wrong class
count: int = pbj.decode(Money, b"").currency  # error: a field read as the wrong type
units = pbj.replace(acct, name="x").units  # error: replace keeps the class
