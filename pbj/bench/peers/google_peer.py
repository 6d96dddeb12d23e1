"""Google's ``protobuf`` as a benchmark peer, for either of its backends.

The backend (``upb``, in C, or ``python``) is fixed when ``google.protobuf`` is first imported:
set ``PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION`` before that, or call :func:`select_backend`
in a fresh process (the bench runner starts one worker process per backend).

No ``_pb2`` module is generated: ``hot.proto`` is compiled by ``grpc_tools.protoc`` into a
``FileDescriptorSet`` in a temporary folder, and the classes are made from the descriptors
at run time (``message_factory.GetMessageClass``), as for the real block's HAPI schemas.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

NAME = "google"
PROTO = Path(__file__).resolve().parents[1] / "hot.proto"
ENV = "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"
HOT_TYPE = "pbjbench.TransactionBody"

_hot_class = None


def select_backend(backend: str) -> None:
    """Choose ``upb`` or ``python`` for this process.

    Raises:
        RuntimeError: ``google.protobuf`` was already imported with another backend.
    """
    if "google.protobuf" in sys.modules:
        if implementation() != backend:
            raise RuntimeError(f"google.protobuf already loaded with backend {implementation()}")
        return
    os.environ[ENV] = backend


def implementation() -> str:
    """The backend in use in this process: ``upb``, ``python`` or ``cpp``."""
    from google.protobuf.internal import api_implementation

    return api_implementation.Type()


def version() -> str:
    """The installed ``protobuf`` package's version."""
    import google.protobuf

    return google.protobuf.__version__


def compile_descriptor_set(protos: list[Path], include: list[Path]) -> bytes:
    """Compile ``.proto`` files with ``grpc_tools.protoc`` into a ``FileDescriptorSet`` (imports included).

    Raises:
        subprocess.CalledProcessError: protoc refused the files (its stderr is attached).
    """
    with tempfile.TemporaryDirectory(prefix="pbj-bench-") as tmp:
        out = Path(tmp) / "set.binpb"
        cmd = [sys.executable, "-m", "grpc_tools.protoc", "--include_imports", f"--descriptor_set_out={out}"]
        cmd += [f"-I{i}" for i in include] + [str(p) for p in protos]
        subprocess.run(cmd, check=True, capture_output=True)
        return out.read_bytes()


def load_classes(descriptor_set: bytes, names: list[str]) -> dict:
    """Add every file of a ``FileDescriptorSet`` to a new pool; return ``{full name: message class}``."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    pool = descriptor_pool.DescriptorPool()
    for file in descriptor_pb2.FileDescriptorSet.FromString(descriptor_set).file:  # dependencies first
        pool.Add(file)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(name)) for name in names}


def hot_class():
    """Google's class of ``pbjbench.TransactionBody`` (``hot.proto`` compiled once per process)."""
    global _hot_class
    if _hot_class is None:
        data = compile_descriptor_set([PROTO], [PROTO.parent])
        _hot_class = load_classes(data, [HOT_TYPE])[HOT_TYPE]
    return _hot_class


def _fill_account(msg, values: dict) -> None:
    msg.shardNum = values["shardNum"]
    msg.realmNum = values["realmNum"]
    msg.accountNum = values["accountNum"]


def build_hot(values: dict):
    """Make a ``TransactionBody`` from the plain nested dict of ``hot_values``."""
    body = hot_class()()
    tid = values["transactionID"]
    body.transactionID.transactionValidStart.seconds = tid["transactionValidStart"]["seconds"]
    body.transactionID.transactionValidStart.nanos = tid["transactionValidStart"]["nanos"]
    _fill_account(body.transactionID.accountID, tid["accountID"])
    body.transactionID.scheduled = tid["scheduled"]
    body.transactionID.nonce = tid["nonce"]
    _fill_account(body.nodeAccountID, values["nodeAccountID"])
    body.transactionFee = values["transactionFee"]
    body.transactionValidDuration.seconds = values["transactionValidDuration"]["seconds"]
    body.memo = values["memo"]
    body.signature = values["signature"]
    body.labels.update(values["labels"])
    if values.get("cryptoTransfer") is not None:
        amounts = body.cryptoTransfer.transfers.accountAmounts
        for item in values["cryptoTransfer"]["transfers"]["accountAmounts"]:
            aa = amounts.add()
            _fill_account(aa.accountID, item["accountID"])
            aa.amount = item["amount"]
            aa.is_approval = item["is_approval"]
    elif values.get("freeze") is not None:
        body.freeze = values["freeze"]
    return body


def encode(obj) -> bytes:
    """Serialize as users do, ``SerializeToString()``; upb then writes map entries in hash order."""
    return obj.SerializeToString()


def encode_canonical(obj) -> bytes:
    """Serialize deterministically (map entries sorted by key): the reference bytes."""
    return obj.SerializeToString(deterministic=True)


def decode(data: bytes):
    """Parse a ``TransactionBody``."""
    return hot_class().FromString(data)


def _read_account(a) -> int:
    return a.shardNum + a.realmNum + a.accountNum


def read_all(obj) -> int:
    """Read every field recursively; return a checksum (ints summed, str/bytes lengths)."""
    tid = obj.transactionID
    start = tid.transactionValidStart
    total = start.seconds + start.nanos + _read_account(tid.accountID) + tid.scheduled + tid.nonce
    total += _read_account(obj.nodeAccountID) + obj.transactionFee
    total += obj.transactionValidDuration.seconds + len(obj.memo) + len(obj.signature)
    for key, value in obj.labels.items():
        total += len(key) + value
    which = obj.WhichOneof("data")
    if which == "cryptoTransfer":
        for aa in obj.cryptoTransfer.transfers.accountAmounts:
            total += _read_account(aa.accountID) + aa.amount + aa.is_approval
    elif which == "freeze":
        total += len(obj.freeze)
    return total
