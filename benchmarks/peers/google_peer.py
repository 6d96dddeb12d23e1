"""Google's ``protobuf`` as a benchmark peer, for either of its backends.

The backend (``upb``, in C, or ``python``) is fixed when ``google.protobuf`` is first imported:
set ``PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION`` before that, or use :func:`select_backend`
in a fresh process (``run_peer.py`` does so in a subprocess per backend).

``hot.proto`` is compiled with ``grpc_tools.protoc`` at run time into ``_generated/`` beside
this file (ignored by git), in a folder named by the hash of the schema's text, so an edited
schema is compiled again and a stale one is never imported.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

NAME = "google"
HERE = Path(__file__).resolve().parent
PROTO = HERE / "hot.proto"
CACHE = HERE / "_generated"
ENV = "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"

_pb2: ModuleType | None = None


def select_backend(backend: str) -> None:
    """Choose ``upb`` or ``python``; fails if ``google.protobuf`` was already loaded otherwise."""
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


def compile_proto(proto: Path, include: Path, out_root: Path = CACHE) -> Path:
    """Compile ``proto`` with protoc into a folder of ``out_root`` named by its hash; return it.

    Compiles into a temporary folder and renames it, so concurrent runs never see half a file.
    """
    digest = hashlib.sha256(proto.read_bytes()).hexdigest()[:16]
    out = out_root / f"{proto.stem}_{digest}"
    if out.is_dir():
        return out
    out_root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out_root, prefix=".tmp-"))
    cmd = [
        sys.executable,
        "-m",
        "grpc_tools.protoc",
        f"-I{include}",
        f"--python_out={tmp}",
        str(proto),
    ]
    subprocess.run(cmd, check=True, capture_output=True)
    try:
        tmp.rename(out)
    except OSError:  # another process got there first
        if not out.is_dir():
            raise
    return out


def load_pb2(proto: Path = PROTO) -> ModuleType:
    """Compile (if needed) and import the ``*_pb2`` module of ``proto``."""
    folder = compile_proto(proto, proto.parent)
    name = f"{proto.stem}_pb2"
    spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def pb2() -> ModuleType:
    """The ``hot_pb2`` module, loaded once per process."""
    global _pb2
    if _pb2 is None:
        _pb2 = load_pb2()
    return _pb2


def _fill_account(msg, values: dict) -> None:
    msg.shardNum = values["shardNum"]
    msg.realmNum = values["realmNum"]
    msg.accountNum = values["accountNum"]


def build_hot(values: dict):
    """Make a ``TransactionBody`` from the plain nested dict of ``hot_values``."""
    body = pb2().TransactionBody()
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
    return pb2().TransactionBody.FromString(data)


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
