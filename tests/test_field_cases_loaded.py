"""Every case of ``../shared/cases/field-cases.jsonl``, its schema loaded from its own ``proto`` text.

Each case's schema goes through ``pbj.load_proto`` (and through Google's
protoc for the oracle). A case's JSON ``value`` is turned into a Google
message with ``json_format`` and from there into the pbj value field by field
(:func:`_from_google`), so the expected pbj value never comes from pbj's own
decoder. When pbj's ProtoJSON (``pbj.from_dict``) is available it must give
the same value.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

import pbj
from pbj.testing import equivalent
from tests.conftest import SHARED

CASES = [json.loads(line) for line in (SHARED / "cases" / "field-cases.jsonl").read_text().splitlines()
         if line.strip()]


def _from_google(cls, gmsg):
    """The pbj instance of ``cls`` holding the values of Google message ``gmsg``."""
    mi = pbj.schema.info(cls)
    by_number = gmsg.DESCRIPTOR.fields_by_number
    kwargs = {}

    def convert(t, v):
        return _from_google(t, v) if pbj.is_message(t) else v

    for f in mi.fields:
        g = by_number[f.number]
        value = getattr(gmsg, g.name)
        if f.is_map:
            kwargs[f.name] = {k: convert(f.map_value, value[k]) for k in value}
        elif f.repeated:
            kwargs[f.name] = tuple(convert(f.type, v) for v in value)
        elif f.optional:
            kwargs[f.name] = convert(f.type, value) if gmsg.HasField(g.name) else None
        else:
            kwargs[f.name] = convert(f.type, value)
    for o in mi.oneofs:
        which = gmsg.WhichOneof(o.members[0].proto_name and by_number[o.members[0].number].containing_oneof.name)
        if which is None:
            kwargs[o.name] = None
            continue
        member = next(m for m in o.members if m.proto_name == which)
        kwargs[o.name] = pbj.OneOf(member.name, convert(member.type, getattr(gmsg, which)))
    return cls(**kwargs)


def _google_class(path, tmp_path, full_name):
    """Google's class of ``full_name``, compiled by protoc into a pool of its own
    (case schemas have no package, so their names repeat across cases)."""
    import grpc_tools
    from grpc_tools import protoc as grpc_protoc

    out = tmp_path / "google.binpb"
    builtin = Path(grpc_tools.__file__).parent / "_proto"
    assert grpc_protoc.main(["protoc", "--include_imports", f"--descriptor_set_out={out}",
                             f"-I{tmp_path}", f"-I{builtin}", str(path)]) == 0
    pool = descriptor_pool.DescriptorPool()
    for fd in descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file:
        pool.Add(fd)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(full_name))


def _load(case, tmp_path):
    path = tmp_path / f"{case['id']}.proto"
    path.write_text(case["proto"])
    ns = pbj.load_proto([path])
    return ns[case["message"]], _google_class(path, tmp_path, case["message"])


@pytest.mark.parametrize("case", [c for c in CASES if "value" in c], ids=lambda c: c["id"])
def test_encode_case(case, tmp_path):
    cls, gcls = _load(case, tmp_path)
    expected = bytes.fromhex(case["bytes_hex"])
    gmsg = json_format.Parse(json.dumps(case["value"]), gcls())
    assert gmsg.SerializeToString(deterministic=True) == expected  # the oracle agrees with the case
    value = _from_google(cls, gmsg)
    if hasattr(pbj, "from_dict"):
        assert equivalent(pbj.from_dict(cls, case["value"]), value)
    assert pbj.encode(value) == expected
    assert pbj.encode(value, reverse=True) == expected
    assert equivalent(pbj.decode(cls, expected), value)  # NaN compared bit for bit


@pytest.mark.parametrize("case", [c for c in CASES if c.get("expect") == "ok"], ids=lambda c: c["id"])
def test_decode_ok_case(case, tmp_path):
    cls, gcls = _load(case, tmp_path)
    decoded = pbj.decode(cls, bytes.fromhex(case["input_hex"]))
    expected = bytes.fromhex(case["reencoded_hex"])
    assert pbj.encode(decoded) == expected
    assert pbj.encode(decoded, reverse=True) == expected
    gmsg = json_format.Parse(json.dumps(case["decoded"]), gcls())
    assert equivalent(decoded, _from_google(cls, gmsg), unknown_fields=False)  # JSON has no unknown fields


@pytest.mark.parametrize("case", [c for c in CASES if c.get("expect") == "error"], ids=lambda c: c["id"])
def test_decode_error_case(case, tmp_path):
    cls, _ = _load(case, tmp_path)
    with pytest.raises(pbj.DecodeError):
        pbj.decode(cls, bytes.fromhex(case["input_hex"]))
