"""pbj message classes as pydantic v2 types and FastAPI bodies.

A pydantic model with message fields validates through pbj's own checks and ProtoJSON, dumps
ProtoJSON in JSON mode, and has the JSON Schema of the ProtoJSON form; that schema is valid
JSON Schema 2020-12 and accepts what ``pbj.to_dict`` writes for random messages of every
shipped declared schema. A FastAPI app with pbj request and response bodies is called through
its real HTTP test client: a valid body, an invalid one (422 naming the field), and the
OpenAPI document, whose schemas are checked with ``jsonschema``.

No ``from __future__ import annotations`` here: FastAPI reads the endpoints' annotations, which
name classes local to a function.
"""

import textwrap
from functools import cache
from typing import Annotated, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbj
from pbj import wellknown
from pbj.testing import equivalent, values
from tests import everything_classes as ec

pydantic = pytest.importorskip("pydantic")
jsonschema = pytest.importorskip("jsonschema")
fastapi = pytest.importorskip("fastapi")


@cache
def shop() -> pbj.Namespace:
    """A loaded schema: int64, enum, a map of messages, a oneof, a Timestamp, a recursive message."""
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp(prefix="pbj-pydantic-"))
    (folder / "shop.proto").write_text(textwrap.dedent("""
        syntax = "proto3";
        package pbjtest.shop;
        import "google/protobuf/timestamp.proto";
        enum Kind { KIND_UNSPECIFIED = 0; FOOD = 1; TOOL = 2; }
        message Money { string currency = 1; int64 cents = 2; }
        message Item {
          string name = 1;
          Money price = 2;
          Kind kind = 3;
          map<string, Money> parts = 4;
          oneof stock { int32 count = 5; bool unlimited = 6; }
          google.protobuf.Timestamp added = 7;
          repeated Item bundled = 8;
          bytes photo = 9;
        }
    """))
    return pbj.load_proto(folder / "shop.proto")


def _item_model() -> Any:
    item_type = shop()["pbjtest.shop.Item"]

    class Order(pydantic.BaseModel):
        item: item_type  # type: ignore[valid-type]
        note: str = ""

    return Order


def test_a_model_field_reads_protojson_and_messages_and_writes_protojson() -> None:
    ns = shop()
    item_cls, money = ns["pbjtest.shop.Item"], ns["pbjtest.shop.Money"]
    order_cls = _item_model()
    order = order_cls(item={"name": "hammer", "price": {"currency": "EUR", "cents": "1250"}, "kind": "TOOL",
                            "parts": {"head": {"cents": 3}}, "unlimited": True, "added": "2026-12-01T09:00:00Z",
                            "photo": "AAE="})
    item = order.item
    assert type(item) is item_cls and item.price == money(currency="EUR", cents=1250)
    assert item.kind is ns.enums["pbjtest.shop.Kind"].TOOL
    assert item.stock == pbj.OneOf("unlimited", True) and item.photo == b"\x00\x01"
    assert item.added == wellknown.Timestamp(seconds=1796115600)
    assert order_cls(item=item).item is item  # a message of the class is taken as it is
    dumped = order.model_dump(mode="json")
    assert dumped["item"] == pbj.to_dict(item) and dumped["item"]["price"]["cents"] == "1250"
    assert order.model_dump()["item"] is item  # Python mode keeps the message
    assert order_cls.model_validate_json(order.model_dump_json()) == order
    assert order_cls(item=pbj.to_json(item)).item == item  # JSON text is read too


def test_a_bad_value_is_a_pydantic_error_at_the_bad_field() -> None:
    order_cls = _item_model()
    with pytest.raises(pydantic.ValidationError) as err:
        order_cls(item={"name": "x", "price": {"cents": "12x"}})
    (e,) = err.value.errors()
    assert e["loc"] == ("item", "price", "cents") and "int64" in e["msg"]
    with pytest.raises(pydantic.ValidationError) as err:
        order_cls(item={"count": 1, "unlimited": True})
    assert "oneof" in err.value.errors()[0]["msg"]
    with pytest.raises(pydantic.ValidationError) as err:
        order_cls(item=shop()["pbjtest.shop.Money"]())
    assert "expected a pbjtest.shop.Item message, got a pbjtest.shop.Money" in err.value.errors()[0]["msg"]


def test_the_json_schema_says_protojson() -> None:
    schema = _item_model().model_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    defs = schema["$defs"]
    item = next(d for d in defs.values() if d.get("title") == "Item")
    money = next(d for d in defs.values() if d.get("title") == "Money")
    cents = money["properties"]["cents"]["anyOf"][0]
    assert {"type": "string", "pattern": "^-?[0-9]+$"} in cents["anyOf"]  # int64 as a decimal string
    kind = item["properties"]["kind"]["anyOf"][0]
    assert {"type": "string", "enum": ["KIND_UNSPECIFIED", "FOOD", "TOOL"]} in kind["anyOf"]
    assert item["properties"]["added"]["anyOf"][0] == {"type": "string", "format": "date-time"}
    assert item["properties"]["parts"]["anyOf"][0]["type"] == "object"
    assert item["not"] == {"anyOf": [{"required": ["count", "unlimited"]}]}  # at most one oneof member
    assert item["properties"]["bundled"]["anyOf"][0]["items"]["$ref"].startswith("#/$defs/")  # recursion by $ref


@pytest.mark.parametrize("cls", [ec.Everything, ec.Presence, ec.Unpacked, ec.Maps, ec.Node, ec.Choice],
                         ids=lambda c: pbj.schema.info(c).full_name)
def test_the_schema_accepts_what_to_dict_writes(cls: type) -> None:
    model = pydantic.create_model("Holder", value=(cls, ...))
    schema = model.model_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)

    @settings(max_examples=6, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.data())
    def run(data: Any) -> None:
        msg = data.draw(values(cls, max_depth=2, unknown_fields=False))
        try:
            doc = pbj.to_dict(msg)
        except pbj.EncodeError:  # a value with no JSON form (a Timestamp out of range ...)
            return
        validator.validate({"value": doc})
        assert equivalent(model.model_validate_json(model(value=msg).model_dump_json()).value, pbj.from_dict(cls, doc))

    run()


def _app() -> Any:
    from fastapi import Body, FastAPI

    ns = shop()
    item_cls = ns["pbjtest.shop.Item"]
    app = FastAPI(title="pbj shop")

    @app.post("/items", response_model=item_cls)
    def restock(item: Annotated[item_cls, Body()]) -> Any:  # type: ignore[valid-type]
        return pbj.replace(item, stock=pbj.OneOf("count", 10))

    @app.get("/items/{name}")
    def find(name: str) -> item_cls:  # type: ignore[valid-type]
        return item_cls(name=name, price=ns["pbjtest.shop.Money"](currency="EUR", cents=2**40))

    return app


def test_fastapi_takes_and_returns_messages_over_http() -> None:
    from fastapi.testclient import TestClient

    with TestClient(_app()) as client:
        ok = client.post("/items", json={"name": "saw", "price": {"cents": "9000000000"}, "kind": "TOOL"})
        assert ok.status_code == 200
        assert ok.json() == {"name": "saw", "price": {"cents": "9000000000"}, "kind": "TOOL", "count": 10}
        got = client.get("/items/nail")
        assert got.status_code == 200 and got.json()["price"] == {"currency": "EUR", "cents": str(2**40)}
        bad = client.post("/items", json={"name": "saw", "price": {"cents": "nine"}})
        assert bad.status_code == 422
        (detail,) = bad.json()["detail"]
        assert detail["loc"] == ["body", "price", "cents"] and "int64" in detail["msg"]
        unknown = client.post("/items", json={"nmae": "saw"})
        assert unknown.status_code == 422 and "nmae" in unknown.json()["detail"][0]["msg"]


def test_the_openapi_document_holds_valid_json_schemas_of_the_messages() -> None:
    from fastapi.testclient import TestClient

    with TestClient(_app()) as client:
        doc = client.get("/openapi.json").json()
    schemas = doc["components"]["schemas"]
    body = doc["paths"]["/items"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body["$ref"].startswith("#/components/schemas/")
    name = body["$ref"].rsplit("/", 1)[1]
    assert schemas[name]["title"] == "Item" and "price" in schemas[name]["properties"]
    for schema in schemas.values():
        jsonschema.Draft202012Validator.check_schema(schema)
    # the request and response bodies validate against the document's own schemas, references resolved
    root = {"$ref": body["$ref"], "components": doc["components"]}
    validator = jsonschema.Draft202012Validator(root)
    ns = shop()
    sample = ns["pbjtest.shop.Item"](name="x", kind=2, parts={"a": ns["pbjtest.shop.Money"](cents=-5)},
                                     stock=pbj.OneOf("count", 3), photo=b"\xff",
                                     bundled=(ns["pbjtest.shop.Item"](name="y"),))
    validator.validate(pbj.to_dict(sample))
    errors = list(validator.iter_errors({"name": "x", "count": 1, "unlimited": True}))
    assert errors  # two members of one oneof: the schema refuses it too
    assert not list(validator.iter_errors({"price": {"cents": 5}}))  # ProtoJSON reads a number for int64 too


@pbj.message(full_name="pbjtest.pydantic.OddNames")
class OddNames:
    """Field names pbj accepts and renames in Python: a keyword, leading underscores, pbj's and attrs'
    own attribute names, a name whose JSON name is empty, and a oneof (members ``if_``, ``lambda_``:
    their JSON names are keywords)."""

    klass: int = pbj.field(1, "int32", name="class")
    private: int = pbj.field(2, "int32", name="_private")
    unknown: int = pbj.field(3, "int64", name="_pbj_unknown")
    attrs_attrs: int = pbj.field(4, "int32", name="__attrs_attrs__")
    blank: int = pbj.field(5, "int32", name="_")
    model_config_: str = pbj.field(6, "string", name="model_config")
    kind: pbj.OneOf | None = pbj.oneof(if_=(7, "int32"), lambda_=(8, "string"))


def test_the_schema_carries_every_name_pbj_reads_and_no_python_attribute_name() -> None:
    """ProtoJSON parsers accept a field's JSON name and its .proto name, never both: so does the schema."""
    schema = pydantic.create_model("Holder", value=(OddNames, ...)).model_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    (odd,) = schema["$defs"].values()
    assert set(odd["properties"]) == {"class", "Private", "_private", "PbjUnknown", "_pbj_unknown", "AttrsAttrs",
                                      "__attrs_attrs__", "", "_", "modelConfig", "model_config", "if", "if_", "lambda",
                                      "lambda_"}
    check = jsonschema.Draft202012Validator(schema)
    full = OddNames(klass=1, private=2, unknown=3, attrs_attrs=4, blank=5, model_config_="m",
                    kind=pbj.OneOf("lambda_", "x"))
    for doc in (pbj.to_dict(full), pbj.to_dict(full, proto_names=True)):
        assert len(doc) == 7 and pbj.from_dict(OddNames, doc) == full
        check.validate({"value": doc})
    for refused in ({"Private": 1, "_private": 2}, {"": 1, "_": 1}, {"if": 1, "lambda": "x"},
                    {"if_": 1, "lambda": "x"}, {"if": 1, "if_": 1},
                    {"class_": 1}, {"klass": 1}, {"f__attrs_attrs__": 1}):
        assert list(check.iter_errors({"value": refused})), refused
        with pytest.raises(pbj.JSONError):  # pbj refuses each too
            pbj.from_dict(OddNames, refused)


def test_the_schema_of_any_takes_the_empty_any() -> None:
    # pbj.to_json writes an Any with no type URL and no value as {} (so does Google's json_format);
    # the schema required "@type", so it refused to_json's own output
    from pbj.json_schema import json_schema
    from pbj.wellknown import Any as AnyMessage

    validator = jsonschema.Draft202012Validator(json_schema(AnyMessage))
    assert pbj.to_json(AnyMessage()) == "{}" and validator.is_valid({})
    assert validator.is_valid({"@type": "type.googleapis.com/x.Y", "a": 1})
    assert not validator.is_valid({"a": 1}) and not validator.is_valid([])
