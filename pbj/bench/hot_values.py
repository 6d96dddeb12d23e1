"""The canonical value of the benchmark's hot message, ``pbjbench.TransactionBody``.

A plain nested dict keyed by the field names of ``hot.proto``. Every field is given, zeros
included (``shardNum``/``realmNum`` are 0 as on Hedera's mainnet, so proto3 leaves them off
the wire). Map keys are listed in sorted order, the order of deterministic serialization.
"""

from __future__ import annotations


def _account(num: int) -> dict:
    return {"shardNum": 0, "realmNum": 0, "accountNum": num}


def _amount(num: int, amount: int, approval: bool = False) -> dict:
    return {"accountID": _account(num), "amount": amount, "is_approval": approval}


HOT_VALUE: dict = {
    "transactionID": {
        "transactionValidStart": {"seconds": 1_726_000_000, "nanos": 123_456_789},
        "accountID": _account(1_234_567),
        "scheduled": False,
        "nonce": 0,
    },
    "nodeAccountID": _account(3),
    "transactionFee": 200_000_000,
    "transactionValidDuration": {"seconds": 120},
    "memo": "hot transfer #1",
    "signature": bytes(range(7, 7 + 64)),
    "labels": {"batch": 42, "priority": -1, "region": 7},
    "cryptoTransfer": {
        "transfers": {
            "accountAmounts": [
                _amount(1_234_567, -150_000_000),
                _amount(3, 10_000_000),
                _amount(98, 40_000_000),
                _amount(4_321_987, 100_000_000, approval=True),
            ],
        },
    },
    "freeze": None,
}
"""The filled hot message: 4 transfers, a memo, a 64-byte signature, a 3-entry map, oneof set."""
