"""pure-protobuf (eigenein/protobuf) as a benchmark peer: ``hot.proto`` declared by hand.

pure-protobuf has no schema loader and no map type, so ``map<string, int64> labels`` is
declared as what it is on the wire, a repeated ``LabelsEntry {string key = 1; int64 value = 2;}``.
It writes every field that is not ``None`` (a 0 or ``""`` too), so proto3's implicit presence
is modelled as ``None`` for "left off": :func:`build_hot` turns zero values into ``None``.
"""

# The peer is the bench extra's, not installed for the tests: pyright checks this module without it
# (mypy: [[tool.mypy.overrides]] in pyproject.toml).
# pyright: reportMissingImports=false

from __future__ import annotations

from dataclasses import dataclass, field
from importlib.metadata import version as _dist_version
from typing import Annotated

from pure_protobuf.annotations import Field, ZigZagInt, uint
from pure_protobuf.message import BaseMessage
from pure_protobuf.one_of import OneOf

NAME = "pure-protobuf"


def version() -> str:
    """The installed ``pure-protobuf`` version."""
    return _dist_version("pure-protobuf")


@dataclass
class AccountID(BaseMessage):
    """``pbjbench.AccountID``."""

    shard_num: Annotated[int | None, Field(1)] = None
    realm_num: Annotated[int | None, Field(2)] = None
    account_num: Annotated[int | None, Field(3)] = None


@dataclass
class Timestamp(BaseMessage):
    """``pbjbench.Timestamp``."""

    seconds: Annotated[int | None, Field(1)] = None
    nanos: Annotated[int | None, Field(2)] = None


@dataclass
class Duration(BaseMessage):
    """``pbjbench.Duration``."""

    seconds: Annotated[int | None, Field(1)] = None


@dataclass
class TransactionID(BaseMessage):
    """``pbjbench.TransactionID``."""

    transaction_valid_start: Annotated[Timestamp | None, Field(1)] = None
    account_id: Annotated[AccountID | None, Field(2)] = None
    scheduled: Annotated[bool | None, Field(3)] = None
    nonce: Annotated[int | None, Field(4)] = None


@dataclass
class AccountAmount(BaseMessage):
    """``pbjbench.AccountAmount``."""

    account_id: Annotated[AccountID | None, Field(1)] = None
    amount: Annotated[ZigZagInt | None, Field(2)] = None
    is_approval: Annotated[bool | None, Field(3)] = None


@dataclass
class TransferList(BaseMessage):
    """``pbjbench.TransferList``."""

    account_amounts: Annotated[list[AccountAmount], Field(1)] = field(default_factory=list)


@dataclass
class CryptoTransferBody(BaseMessage):
    """``pbjbench.CryptoTransferBody``."""

    transfers: Annotated[TransferList | None, Field(1)] = None


@dataclass
class LabelsEntry(BaseMessage):
    """The implicit map entry of ``TransactionBody.labels``."""

    key: Annotated[str | None, Field(1)] = None
    value: Annotated[int | None, Field(2)] = None


@dataclass
class TransactionBody(BaseMessage):
    """``pbjbench.TransactionBody``; the oneof ``data`` is ``crypto_transfer`` or ``freeze``."""

    data = OneOf()  # type: ignore[var-annotated]  # an annotation would make it a dataclass field

    transaction_id: Annotated[TransactionID | None, Field(1)] = None
    node_account_id: Annotated[AccountID | None, Field(2)] = None
    transaction_fee: Annotated[uint | None, Field(3)] = None
    transaction_valid_duration: Annotated[Duration | None, Field(4)] = None
    memo: Annotated[str | None, Field(6)] = None
    signature: Annotated[bytes | None, Field(7)] = None
    labels: Annotated[list[LabelsEntry], Field(8)] = field(default_factory=list)
    crypto_transfer: Annotated[CryptoTransferBody | None, Field(14, one_of=data)] = None
    freeze: Annotated[str | None, Field(15, one_of=data)] = None


def _nz(value):
    """Proto3 implicit presence: a zero value is left off, i.e. ``None``."""
    return value or None


def _account(v: dict) -> AccountID:
    return AccountID(_nz(v["shardNum"]), _nz(v["realmNum"]), _nz(v["accountNum"]))


def build_hot(values: dict) -> TransactionBody:
    """Make a ``TransactionBody`` from the plain nested dict of ``hot_values``."""
    tid = values["transactionID"]
    start = tid["transactionValidStart"]
    crypto = values.get("cryptoTransfer")
    if crypto is not None:
        amounts = [
            AccountAmount(_account(a["accountID"]), _nz(a["amount"]), _nz(a["is_approval"]))
            for a in crypto["transfers"]["accountAmounts"]
        ]
        crypto = CryptoTransferBody(TransferList(amounts))
    return TransactionBody(
        transaction_id=TransactionID(
            Timestamp(_nz(start["seconds"]), _nz(start["nanos"])),
            _account(tid["accountID"]),
            _nz(tid["scheduled"]),
            _nz(tid["nonce"]),
        ),
        node_account_id=_account(values["nodeAccountID"]),
        transaction_fee=_nz(values["transactionFee"]),
        transaction_valid_duration=Duration(_nz(values["transactionValidDuration"]["seconds"])),
        memo=_nz(values["memo"]),
        signature=_nz(values["signature"]),
        labels=[LabelsEntry(_nz(k), _nz(v)) for k, v in values["labels"].items()],
        crypto_transfer=crypto,
        freeze=values.get("freeze") if crypto is None else None,
    )


def encode(obj: TransactionBody) -> bytes:
    """Serialize with ``bytes(message)``."""
    return bytes(obj)


def decode(data: bytes) -> TransactionBody:
    """Parse with ``TransactionBody.loads``."""
    return TransactionBody.loads(data)


def _i(value) -> int:
    return value or 0


def _read_account(a: AccountID | None) -> int:
    if a is None:
        return 0
    return _i(a.shard_num) + _i(a.realm_num) + _i(a.account_num)


def read_all(obj: TransactionBody) -> int:
    """Read every field recursively; return a checksum (ints summed, str/bytes lengths)."""
    total = 0
    tid = obj.transaction_id
    if tid is not None:
        start = tid.transaction_valid_start
        if start is not None:
            total += _i(start.seconds) + _i(start.nanos)
        total += _read_account(tid.account_id) + _i(tid.scheduled) + _i(tid.nonce)
    total += _read_account(obj.node_account_id) + _i(obj.transaction_fee)
    if obj.transaction_valid_duration is not None:
        total += _i(obj.transaction_valid_duration.seconds)
    total += len(obj.memo or "") + len(obj.signature or b"")
    for entry in obj.labels:
        total += len(entry.key or "") + _i(entry.value)
    crypto = obj.crypto_transfer
    if crypto is not None:
        if crypto.transfers is not None:
            for aa in crypto.transfers.account_amounts:
                total += _read_account(aa.account_id) + _i(aa.amount) + _i(aa.is_approval)
    elif obj.freeze is not None:
        total += len(obj.freeze)
    return total
