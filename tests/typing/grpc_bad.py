"""Wrong user programs with the typed service stubs: each line marked ``# error`` is reported."""

from __future__ import annotations

import grpc
from typedemo.demo.common import Money
from typedemo.demo.v1 import Account, AccountsAsyncStub, AccountsServicer, AccountsStub


def use(channel: grpc.Channel) -> None:
    stub = AccountsStub(channel)
    stub.Get(Money())  # error: a request of the wrong class
    wrong: Money = stub.Get(Account())  # error: the reply used as the wrong class
    stub.Upload(Account())  # error: one request given to a client-streaming method
    stub.Get(Account(), timeout="1")  # error: a timeout that is not a number
    stub.Gett(Account())  # error: a method the service does not have
    print(wrong)


class Impl(AccountsServicer):
    def Get(self, request: Money, context: object) -> Account:  # error: a handler taking the wrong request
        return Account()


async def use_async(channel: grpc.aio.Channel) -> None:
    upload = AccountsAsyncStub(channel).Upload()
    await upload.write(Money())  # error: a streamed request of the wrong class
