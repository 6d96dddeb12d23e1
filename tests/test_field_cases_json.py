"""The cases of ``../shared/cases/field-cases.jsonl`` read and written through pbj's ProtoJSON.

Each case's schema is loaded from its own ``proto`` text with ``pbj.load_proto``
(and compiled by Google's protoc for the oracle), as in
``tests/test_field_cases_loaded.py``. An encode case's JSON ``value`` goes
through ``pbj.from_json``; both writers must give the case's ``bytes_hex``, and
``pbj.to_json`` of the decoded bytes must be the case's JSON again (as a JSON
value, ``-0.0`` distinct from ``0.0``), which is also what Google's
``json_format.MessageToJson`` prints. A decode case's ``decoded`` JSON is what
``pbj.to_json`` prints for the decoded input.
"""

from __future__ import annotations

import json
import math

import pytest
from google.protobuf import json_format

import pbj
from pbj.testing import equivalent
from tests.test_field_cases_loaded import CASES, _load


def same_json(a, b) -> bool:
    """Equal JSON values, telling ``-0.0`` from ``0.0`` and an integer from a boolean."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(v, b[k]) for k, v in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, float) or isinstance(b, float):
        return (isinstance(a, int | float) and isinstance(b, int | float) and a == b
                and math.copysign(1.0, a) == math.copysign(1.0, b))
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("case", [c for c in CASES if "value" in c], ids=lambda c: c["id"])
def test_encode_case_from_json(case, tmp_path):
    cls, gcls = _load(case, tmp_path)
    expected = bytes.fromhex(case["bytes_hex"])
    value = pbj.from_json(cls, json.dumps(case["value"]))
    assert pbj.encode(value) == expected
    assert pbj.encode(value, reverse=True) == expected
    decoded = pbj.decode(cls, expected)
    assert equivalent(decoded, value)
    written = json.loads(pbj.to_json(decoded))
    assert same_json(written, case["value"]), (written, case["value"])
    google = json.loads(json_format.MessageToJson(gcls.FromString(expected)))
    assert same_json(written, google)


@pytest.mark.parametrize("case", [c for c in CASES if "decoded" in c], ids=lambda c: c["id"])
def test_decode_case_to_json(case, tmp_path):
    cls, gcls = _load(case, tmp_path)
    data = bytes.fromhex(case["input_hex"])
    written = json.loads(pbj.to_json(pbj.decode(cls, data)))
    assert same_json(written, case["decoded"]), (written, case["decoded"])
    assert same_json(written, json.loads(json_format.MessageToJson(gcls.FromString(data))))
    back = pbj.from_json(cls, json.dumps(case["decoded"]))
    assert equivalent(back, pbj.decode(cls, data), unknown_fields=False)
