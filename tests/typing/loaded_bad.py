"""Wrong user programs with loaded classes and their stubs: each line marked ``# error`` is reported."""

from __future__ import annotations

from typedemo.demo.common import Money
from typedemo.demo.v1 import Account

import pbj

Account(nmae="ann")  # error: a wrong keyword
Account(balance="5")  # error: a wrong field type
Account(parent=Money())  # error: a message of the wrong class
acct = Account()
acct.name = "bob"  # error: assigning to a frozen field
Account(contact=pbj.OneOf("email", 5))  # error: a wrong oneof member value
wrong: Money = pbj.decode(Account, b"")  # error: the result of decode used as the wrong class
count: int = pbj.decode(Money, b"").currency  # error: a field read as the wrong type
Account(tags=(1,))  # error: a repeated field's item of the wrong type
Account(kind="KIND_USER")  # error: an enum field given a str
Account(limits={"day": "3"})  # error: a map value of the wrong type
exact: int = Account().maybe  # error: an optional field is int | None
Account(tags="abc")  # error: a str for a repeated string field (a str is an iterable of str)
