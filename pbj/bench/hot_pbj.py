"""pbj's side of the hot-message benchmark: ``hot.proto`` declared with ``@pbj.message``.

Has the same interface as the peer modules (``NAME``, ``version()``, ``build_hot(values)``,
``encode(obj)``, ``decode(data)``, ``read_all(obj)``), plus ``encode_reverse(obj)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import pbj

NAME = "pbj"


def version() -> str:
    """pbj's version."""
    return pbj.__version__


def encode(obj) -> bytes:
    """``pbj.encode``: the forward writer (sizes measured, then written front to back)."""
    return pbj.encode(obj)


def encode_reverse(obj) -> bytes:
    """``pbj.encode(obj, reverse=True)``: the reverse writer (no measuring pass)."""
    return pbj.encode(obj, reverse=True)


@pbj.message(full_name="pbjbench.AccountID")
class AccountID:
    """``pbjbench.AccountID``."""

    shardNum: int = pbj.field(1, "int64")
    realmNum: int = pbj.field(2, "int64")
    accountNum: int = pbj.field(3, "int64")


@pbj.message(full_name="pbjbench.Timestamp")
class Timestamp:
    """``pbjbench.Timestamp``."""

    seconds: int = pbj.field(1, "int64")
    nanos: int = pbj.field(2, "int32")


@pbj.message(full_name="pbjbench.Duration")
class Duration:
    """``pbjbench.Duration``."""

    seconds: int = pbj.field(1, "int64")


@pbj.message(full_name="pbjbench.TransactionID")
class TransactionID:
    """``pbjbench.TransactionID``."""

    transactionValidStart: Timestamp | None = pbj.field(1, Timestamp)
    accountID: AccountID | None = pbj.field(2, AccountID)
    scheduled: bool = pbj.field(3, "bool")
    nonce: int = pbj.field(4, "int32")


@pbj.message(full_name="pbjbench.AccountAmount")
class AccountAmount:
    """``pbjbench.AccountAmount``."""

    accountID: AccountID | None = pbj.field(1, AccountID)
    amount: int = pbj.field(2, "sint64")
    is_approval: bool = pbj.field(3, "bool")


@pbj.message(full_name="pbjbench.TransferList")
class TransferList:
    """``pbjbench.TransferList``."""

    accountAmounts: Sequence[AccountAmount] = pbj.field(1, AccountAmount, repeated=True)


@pbj.message(full_name="pbjbench.CryptoTransferBody")
class CryptoTransferBody:
    """``pbjbench.CryptoTransferBody``."""

    transfers: TransferList | None = pbj.field(1, TransferList)


@pbj.message(full_name="pbjbench.TransactionBody")
class TransactionBody:
    """``pbjbench.TransactionBody``."""

    transactionID: TransactionID | None = pbj.field(1, TransactionID)
    nodeAccountID: AccountID | None = pbj.field(2, AccountID)
    transactionFee: int = pbj.field(3, "uint64")
    transactionValidDuration: Duration | None = pbj.field(4, Duration)
    memo: str = pbj.field(6, "string")
    signature: bytes = pbj.field(7, "bytes")
    labels: pbj.FrozenMap = pbj.map_field(8, "string", "int64")
    data: pbj.OneOf | None = pbj.oneof(cryptoTransfer=(14, CryptoTransferBody), freeze=(15, "string"))


def decode(data: bytes) -> TransactionBody:
    """``pbj.decode(TransactionBody, data)``."""
    return pbj.decode(TransactionBody, data)


def _account(d: dict) -> AccountID:
    return AccountID(**d)


def build_hot(v: dict) -> TransactionBody:
    """Build the pbj TransactionBody from the plain dict of ``hot_values.py``."""
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
    """Read every field of a pbj TransactionBody recursively; return a checksum (ints summed, str/bytes lengths)."""
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
