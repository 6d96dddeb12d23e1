"""pbj declarations of the benchmark's hot message (``peers/hot.proto``), and a builder."""

from __future__ import annotations

import pbj


@pbj.message(full_name="pbjbench.AccountID")
class AccountID:
    shardNum: int = pbj.field(1, "int64")
    realmNum: int = pbj.field(2, "int64")
    accountNum: int = pbj.field(3, "int64")


@pbj.message(full_name="pbjbench.Timestamp")
class Timestamp:
    seconds: int = pbj.field(1, "int64")
    nanos: int = pbj.field(2, "int32")


@pbj.message(full_name="pbjbench.Duration")
class Duration:
    seconds: int = pbj.field(1, "int64")


@pbj.message(full_name="pbjbench.TransactionID")
class TransactionID:
    transactionValidStart: Timestamp | None = pbj.field(1, Timestamp)
    accountID: AccountID | None = pbj.field(2, AccountID)
    scheduled: bool = pbj.field(3, "bool")
    nonce: int = pbj.field(4, "int32")


@pbj.message(full_name="pbjbench.AccountAmount")
class AccountAmount:
    accountID: AccountID | None = pbj.field(1, AccountID)
    amount: int = pbj.field(2, "sint64")
    is_approval: bool = pbj.field(3, "bool")


@pbj.message(full_name="pbjbench.TransferList")
class TransferList:
    accountAmounts: tuple[AccountAmount, ...] = pbj.field(1, AccountAmount, repeated=True)


@pbj.message(full_name="pbjbench.CryptoTransferBody")
class CryptoTransferBody:
    transfers: TransferList | None = pbj.field(1, TransferList)


@pbj.message(full_name="pbjbench.TransactionBody")
class TransactionBody:
    transactionID: TransactionID | None = pbj.field(1, TransactionID)
    nodeAccountID: AccountID | None = pbj.field(2, AccountID)
    transactionFee: int = pbj.field(3, "uint64")
    transactionValidDuration: Duration | None = pbj.field(4, Duration)
    memo: str = pbj.field(6, "string")
    signature: bytes = pbj.field(7, "bytes")
    labels: pbj.FrozenMap = pbj.map_field(8, "string", "int64")
    data: pbj.OneOf | None = pbj.oneof(cryptoTransfer=(14, CryptoTransferBody), freeze=(15, "string"))


def _account(d: dict) -> AccountID:
    return AccountID(**d)


def build_hot(v: dict) -> TransactionBody:
    """Build the pbj TransactionBody from the plain dict of ``peers/hot_values.py``."""
    tid = v["transactionID"]
    ct = v["cryptoTransfer"]
    return TransactionBody(
        transactionID=TransactionID(
            transactionValidStart=Timestamp(**tid["transactionValidStart"]),
            accountID=_account(tid["accountID"]), scheduled=tid["scheduled"], nonce=tid["nonce"]),
        nodeAccountID=_account(v["nodeAccountID"]),
        transactionFee=v["transactionFee"],
        transactionValidDuration=Duration(**v["transactionValidDuration"]),
        memo=v["memo"], signature=v["signature"], labels=v["labels"],
        data=pbj.OneOf("cryptoTransfer", CryptoTransferBody(transfers=TransferList(accountAmounts=[
            AccountAmount(accountID=_account(a["accountID"]), amount=a["amount"], is_approval=a["is_approval"])
            for a in ct["transfers"]["accountAmounts"]]))),
    )


def read_all(o) -> int:
    """Read every field of a pbj TransactionBody recursively; return a checksum."""
    s = 0
    t = o.transactionID
    ts = t.transactionValidStart
    s += ts.seconds + ts.nanos
    a = t.accountID
    s += a.shardNum + a.realmNum + a.accountNum + t.scheduled + t.nonce
    a = o.nodeAccountID
    s += a.shardNum + a.realmNum + a.accountNum
    s += o.transactionFee + o.transactionValidDuration.seconds + len(o.memo) + len(o.signature)
    for k, x in o.labels.items():
        s += len(k) + x
    d = o.data
    if d is not None and d[0] == "cryptoTransfer":
        for aa in d[1].transfers.accountAmounts:
            a = aa.accountID
            s += a.shardNum + a.realmNum + a.accountNum + aa.amount + aa.is_approval
    return s
