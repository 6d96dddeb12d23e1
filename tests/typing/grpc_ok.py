"""A correct user program with the typed service stubs pbj stubs writes (schema typedemo.proto)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import grpc
from typedemo.demo.common import Money
from typedemo.demo.v1 import Account, AccountsAsyncServicer, AccountsAsyncStub, AccountsServicer, AccountsStub


class Impl(AccountsServicer):
    def Get(self, request: Account, context: object) -> Account:
        return Account(name=request.name)

    def List(self, request: Account, context: object) -> Iterator[Account]:
        yield request

    def Upload(self, request_iterator: Iterator[Account], context: object) -> Money:
        return Money(units=sum(a.balance for a in request_iterator))


class AsyncImpl(AccountsAsyncServicer):
    async def Get(self, request: Account, context: object) -> Account:
        return request

    async def List(self, request: Account, context: object) -> AsyncIterator[Account]:
        yield request


def use(channel: grpc.Channel) -> None:
    stub = AccountsStub(channel)
    acct: Account = stub.Get(Account(name="a"), timeout=1.5, metadata=[("k", "v")], wait_for_ready=True)
    reply, call = stub.Get.with_call(Account())
    names: list[str] = [a.name for a in stub.List(Account())] + [acct.name, reply.name]
    money: Money = stub.Upload(iter([Account()]))
    for a in stub.Sync(iter([Account(), Account()])):
        names.append(a.name)
    print(names, money.units, call.code(), call.trailing_metadata())
    stream = stub.List(Account(), timeout=2.0)
    first: Account = next(stream)
    print(first.name, stream.initial_metadata(), stream.cancel(), stream.is_active())
    Impl().add_to_server(grpc.server(None))  # type: ignore[arg-type]


async def use_async(channel: grpc.aio.Channel) -> None:
    stub = AccountsAsyncStub(channel)
    acct: Account = await stub.Get(Account(name="a"), timeout=1.0)
    async for a in stub.List(acct):
        print(a.name)
    money: Money = await stub.Upload([Account()])
    print(money.units)
    unary = stub.Get(Account())
    print(await unary.initial_metadata(), await unary, await unary.code())
    listing = stub.List(Account())
    print(await listing.read(), listing.cancel())
    upload = stub.Upload()
    await upload.write(Account(balance=1))
    await upload.done_writing()
    total: Money = await upload
    chat = stub.Sync()
    await chat.write(Account())
    await chat.done_writing()
    async for b in chat:
        print(b.name, total.units)
