"""Encode and decode one filled ``proto.Everything`` (pbj-it's every-feature message), pbj next to
Google's protobuf with both of its backends, in one run: ``python -m benchmarks.everything``.

Needs ``../shared/protos`` beside the checkout and the ``test`` extra (protobuf, grpcio-tools).
Each Google backend runs in its own subprocess (the backend is fixed when protobuf is imported).
Prints µs per operation: median of 7 rounds of ``timeit`` (best in brackets).
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import timeit
from pathlib import Path

SHARED = Path(os.environ.get("PBJ_SHARED", Path(__file__).resolve().parents[2] / "shared"))
PBJ_IT = SHARED / "protos" / "pbj-it"
GOOGLE = SHARED / "protos" / "google"

_TS = {"seconds": "1726000000", "nanos": 123456789}
_INNER = {
    "int32Number": -42, "sint32Number": -1234567, "uint32Number": 4000000000, "fixed32Number": 77,
    "sfixed32Number": -77, "floatNumber": 1.5, "int64Number": "-9000000000", "sint64Number": "123456789012",
    "uint64Number": "18446744073709551615", "fixed64Number": "1234567890123", "sfixed64Number": "-5",
    "doubleNumber": 2.718281828, "booleanField": True, "enumSuit": "CLUBS", "subObject": _TS,
    "text": "every field of every kind", "bytesField": "AAECAwQFBgcICQ==",
    "int32NumberList": [1, -2, 300, 70000], "sint64NumberList": ["-1", "2", "-300000"],
    "doubleNumberList": [0.5, -1.25, 1e100], "booleanList": [True, False, True],
    "enumSuitList": ["SPADES", "DIAMONDS"], "subObjectList": [_TS, {"seconds": "5"}],
    "textList": ["a", "bé", "ccc"], "bytesExampleList": ["AQI=", ""],
    "int32Boxed": 5, "stringBoxed": "boxed", "doubleBoxed": 0.25,
    "textOneOf": "oneof member",
}
VALUE = dict(_INNER)
VALUE.pop("textOneOf")
VALUE.update({
    "innerEverything": _INNER,
    "mapInt32ToString": {"1": "one", "-2": "minus two", "300": "three hundred"},
    "mapBoolToDouble": {"true": 1.0, "false": -1.0},
    "mapStringToMessage": {"a": {"int32Number": 1}, "b": {"text": "bee"}},
    "mapUInt64ToBytes": {"18446744073709551615": "/w=="},
    "mapInt64ToBool": {"-1": True},
    "subObjectOneOf": _TS,
})


def _time(fn, number: int = 2000) -> tuple[float, float]:
    rounds = [t / number * 1e6 for t in timeit.repeat(fn, number=number, repeat=7)]
    return statistics.median(rounds), min(rounds)


def _google_figures() -> dict:
    from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
    from google.protobuf.internal import api_implementation
    from grpc_tools import protoc

    out = Path(tempfile.mkdtemp()) / "set.binpb"
    protoc.main(["protoc", "--include_imports", f"--descriptor_set_out={out}", f"-I{PBJ_IT}", f"-I{GOOGLE}",
                 str(PBJ_IT / "everything.proto")])
    pool = descriptor_pool.DescriptorPool()
    for fd in descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file:
        pool.Add(fd)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("proto.Everything"))
    msg = json_format.ParseDict(VALUE, cls())
    data = msg.SerializeToString(deterministic=True)
    return {
        "backend": api_implementation.Type(),
        "bytes": data.hex(),
        "encode": _time(lambda: msg.SerializeToString(deterministic=True)),
        "decode": _time(lambda: cls.FromString(data)),
    }


def main() -> int:
    """Print the table; with ``--google`` (internal) print this process's Google figures as JSON."""
    if "--google" in sys.argv:
        print(json.dumps(_google_figures()))
        return 0
    import pbj

    ns = pbj.load_proto([PBJ_IT / "everything.proto"], include=[PBJ_IT, GOOGLE])
    cls = ns["proto.Everything"]
    value = pbj.from_dict(cls, VALUE)
    data = pbj.encode(value)
    fresh = iter([pbj.decode(cls, data) for _ in range(7 * 2000 + 10)])
    rows = {
        "pbj encode (sizes cached)": _time(lambda: pbj.encode(value)),
        "pbj encode (fresh object)": _time(lambda: pbj.encode(next(fresh))),
        "pbj encode reverse": _time(lambda: pbj.encode(value, reverse=True)),
        "pbj decode": _time(lambda: pbj.decode(cls, data)),
    }
    for backend in ("upb", "python"):
        env = dict(os.environ, PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=backend)
        res = json.loads(subprocess.run([sys.executable, "-m", "benchmarks.everything", "--google"], env=env,
                                        capture_output=True, text=True, check=True).stdout)
        google_bytes = bytes.fromhex(res["bytes"])
        # upb writes map entries in its own order (not ascending keys); the values must agree
        assert pbj.decode(cls, google_bytes) == value, f"{backend} decodes to another value"
        assert backend == "upb" or google_bytes == data, f"{backend} bytes differ from pbj's"
        rows[f"google {res['backend']} encode"] = tuple(res["encode"])
        rows[f"google {res['backend']} decode"] = tuple(res["decode"])
    print(f"proto.Everything, {len(data)} bytes; Python {platform.python_version()}, {platform.machine()}, "
          f"load {os.getloadavg()[0]:.2f}")
    print(f"{'operation':32} {'median µs':>10} {'best µs':>10}")
    for name, (med, best) in rows.items():
        print(f"{name:32} {med:10.1f} {best:10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
