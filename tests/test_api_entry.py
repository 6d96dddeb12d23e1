"""``pbj.decode`` and ``pbj.encode`` as builtins of the native engine (``pbj/_native/entry.c``).

With the extension built, ``pbj.decode``/``pbj.encode`` are builtins that answer the common call
in C (no Python frame: counted with ``sys.setprofile``) and hand every other call, unchanged, to
the Python functions ``pbj.api.python_decode``/``python_encode``. Every test here compares the
two on the same arguments, on both engines: the same value, or the same error (type, text,
path, offset). ``pbj.api.decoder_of``/``encoder_of`` (grpcio's one-argument forms) likewise.
"""

from __future__ import annotations

import inspect
import pickle
import sys

import pytest

import pbj
from pbj import _native, api
from pbj.schema import EMPTY_MAP

built = pytest.mark.skipif(not _native.available(), reason="the native engine is not built")
ENGINES = ["python", "native"] if _native.available() else ["python"]


@pytest.fixture(params=ENGINES)
def engine(request):
    before = pbj.engine()
    pbj.use_engine(request.param)
    try:
        yield request.param
    finally:
        pbj.use_engine(before)


@pbj.message
class Money:
    currency: str = pbj.field(1, "string")
    units: int = pbj.field(2, "int64")


@pbj.message
class Three:
    id: int = pbj.field(1, "int32")
    name: str = pbj.field(2, "string")
    money: Money | None = pbj.field(3, Money)


@pbj.message
class Needs:
    a: int | None = pbj.field(1, "int32", required=True)
    child: Needs | None = pbj.field(2, "Needs")


@pbj.message
class Tagged:
    labels: pbj.FrozenMap[str, int] = pbj.map_field(1, "string", "int32")


class NotAMessage:
    pass


THREE = Three(id=150, name="hello", money=Money(currency="HBAR", units=5))
DATA = bytes.fromhex("089601120568656c6c6f1a080a044842415210 05".replace(" ", ""))


def outcome(fn, *args, **kwargs):
    """What a call gives: ("ok", value) or ("error", type, text, path, offset)."""
    try:
        return ("ok", fn(*args, **kwargs))
    except Exception as exc:  # compared, not swallowed
        return ("error", type(exc), str(exc), getattr(exc, "path", None), getattr(exc, "offset", None))


def python_frames(fn, *args, **kwargs):
    """The Python functions entered while ``fn(*args, **kwargs)`` runs (sys.setprofile's "call" events)."""
    calls = []

    def profile(frame, event, arg):
        if event == "call":
            calls.append(frame.f_code.co_name)
    sys.setprofile(profile)
    try:
        fn(*args, **kwargs)
    finally:
        sys.setprofile(None)
    return calls


def _refused(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, which must raise TypeError."""
    with pytest.raises(TypeError):
        fn(*args, **kwargs)


def test_the_expected_bytes():
    assert pbj.encode(THREE) == DATA == api.python_encode(THREE)
    assert pbj.decode(Three, DATA) == THREE


@built
def test_the_entry_points_are_builtins_with_the_python_docs():
    """decode/encode are the extension's builtins; signature and docstring are the Python functions'."""
    assert inspect.isbuiltin(pbj.decode) and inspect.isbuiltin(pbj.encode)
    assert pbj.decode is api.decode and pbj.encode is api.encode
    assert inspect.isfunction(api.python_decode) and inspect.isfunction(api.python_encode)
    for c, py in ((pbj.decode, api.python_decode), (pbj.encode, api.python_encode)):
        want = [(p.name, p.kind, p.default) for p in inspect.signature(py).parameters.values()]
        assert [(p.name, p.kind, p.default) for p in inspect.signature(c).parameters.values()] == want
    assert inspect.getdoc(pbj.decode) == inspect.getdoc(api.python_decode)
    assert inspect.getdoc(pbj.encode) == inspect.getdoc(api.python_encode)
    assert (pbj.decode.__name__, pbj.decode.__module__) == ("decode", "pbj.api")
    assert pickle.loads(pickle.dumps(pbj.decode)) is pbj.decode


@built
def test_a_small_call_enters_no_python_frame():
    """Native engine, a compiled class with no required field, bytes: decode and encode run no Python code."""
    before = pbj.engine()
    pbj.use_engine("native")
    try:
        pbj.decode(Three, DATA)  # compiled
        assert python_frames(pbj.decode, Three, DATA) == []
        assert python_frames(pbj.decode, Three, DATA, max_depth=5, max_size=100, allow_partial=True) == []
        assert python_frames(pbj.encode, THREE) == []
        assert python_frames(pbj.encode, Three(id=1), allow_partial=False, reverse=False) == []
        assert python_frames(pbj.encode, THREE, reverse=True) == []  # the reverse writer too
        # a bytearray, reverse not a bool: the Python function answers
        assert "decode" in python_frames(pbj.decode, Three, bytearray(DATA))
        assert "encode" in python_frames(_refused, pbj.encode, THREE, reverse=1)
        pbj.use_engine("python")
        assert "decode" in python_frames(pbj.decode, Three, DATA)
        assert "encode" in python_frames(pbj.encode, THREE)
    finally:
        pbj.use_engine(before)


@built
def test_the_first_call_compiles_through_python():
    """A class never used before: the first call compiles it in Python, the second runs in C."""
    @pbj.message
    class Fresh:
        x: int = pbj.field(1, "int32")

    before = pbj.engine()
    pbj.use_engine("native")
    try:
        assert Fresh.__dict__.get("__pbj_codec__") is None
        assert "decode" in python_frames(pbj.decode, Fresh, b"\x08\x07")
        assert pbj.decode(Fresh, b"\x08\x07") == Fresh(x=7)
        assert python_frames(pbj.decode, Fresh, b"\x08\x07") == []
    finally:
        pbj.use_engine(before)


DECODE_CALLS = [
    ((Three, DATA), {}),
    ((Three, bytearray(DATA)), {}),
    ((Three, memoryview(DATA)), {}),
    ((Three, b""), {}),
    ((Three, DATA[:-1]), {}),                      # truncated: DecodeError with path and offset
    ((Three, b"\x0a\x05abc"), {}),                  # a length past the end
    ((Three, b"\x1a\x02\x08\x01\x1a\x02\x10\x02"), {}),  # a sub-message twice: merged (declined, Python merges)
    ((Three, DATA), {"max_depth": 0}),
    ((Three, DATA), {"max_depth": 1}),
    ((Three, DATA), {"max_depth": 2**70}),
    ((Three, DATA), {"max_depth": -1}),
    ((Three, DATA), {"max_depth": True}),
    ((Three, DATA), {"max_depth": 1.5}),
    ((Three, DATA), {"max_depth": "3"}),
    ((Three, DATA), {"max_size": None}),
    ((Three, DATA), {"max_size": len(DATA)}),
    ((Three, DATA), {"max_size": len(DATA) - 1}),
    ((Three, DATA), {"max_size": 0}),
    ((Three, DATA), {"max_size": -1}),
    ((Three, DATA), {"max_size": 2**70}),
    ((Three, DATA), {"max_size": -(2**70)}),
    ((Three, DATA), {"max_size": 1.5}),
    ((Three, DATA), {"allow_partial": True}),
    ((Three, DATA), {"allow_partial": 1}),
    ((Three, DATA), {"allow_partial": None}),
    ((Three, DATA), {"unknown": 1}),
    ((Three,), {"data": DATA}),
    ((), {"cls": Three, "data": DATA}),
    ((Three,), {}),
    ((Three, DATA, 5), {}),
    ((THREE, DATA), {}),                            # an instance, not a class
    ((NotAMessage, DATA), {}),
    ((int, DATA), {}),
    (("Three", DATA), {}),
    ((Three, "text"), {}),
    ((Three, None), {}),
    ((Needs, b""), {}),                             # a required field missing
    ((Needs, b""), {"allow_partial": True}),
    ((Needs, b"\x08\x01\x12\x00"), {}),             # missing one level down
    ((Needs, b"\x08\x01\x12\x02\x08\x02"), {}),
    ((Tagged, b"\x0a\x05\x0a\x01k\x10\x07"), {}),
]


@pytest.mark.parametrize(("args", "kwargs"), DECODE_CALLS)
def test_decode_gives_what_the_python_function_gives(engine, args, kwargs):
    """The same value, or the same error (type, text, path, offset), as pbj.api.python_decode."""
    assert outcome(pbj.decode, *args, **kwargs) == outcome(api.python_decode, *args, **kwargs)


def test_a_keyword_spelled_by_a_new_string_is_still_a_keyword(engine):
    """A keyword name that is not the interned constant (built at run time) works as any keyword."""
    name = "".join(["max_", "size"])
    assert outcome(pbj.decode, Three, DATA, **{name: 1}) == outcome(api.python_decode, Three, DATA, max_size=1)
    assert outcome(pbj.decode, Three, DATA, **{name: 1})[0] == "error"


def _bad_three():
    o = Three(id=1, name="x")
    object.__setattr__(o, "name", 7)  # behind the constructor's back: the writer must name the field
    return o


ENCODE_CALLS = [
    ((THREE,), {}),
    ((Three(),), {}),
    ((Three(id=-1, name="é", money=Money()),), {}),
    ((THREE,), {"reverse": True}),
    ((THREE,), {"reverse": False}),
    ((THREE,), {"reverse": 1}),
    ((THREE,), {"reverse": None}),
    ((THREE,), {"allow_partial": True}),
    ((THREE,), {"allow_partial": 0}),
    ((THREE,), {"other": 1}),
    ((), {"obj": THREE}),
    ((), {}),
    ((THREE, THREE), {}),
    ((NotAMessage(),), {}),
    ((Three,), {}),
    ((None,), {}),
    ((Needs(),), {}),
    ((Needs(),), {"allow_partial": True}),
    ((Needs(),), {"reverse": True}),
    ((Needs(a=1, child=Needs()),), {}),
    ((Needs(a=1, child=Needs(a=2)),), {}),
    ((Tagged(labels=pbj.FrozenMap({"b": 2, "a": 1})),), {}),
    ((Tagged(labels=EMPTY_MAP),), {}),
]


@pytest.mark.parametrize(("args", "kwargs"), ENCODE_CALLS)
def test_encode_gives_what_the_python_function_gives(engine, args, kwargs):
    """The same bytes, or the same error, as pbj.api.python_encode."""
    assert outcome(pbj.encode, *args, **kwargs) == outcome(api.python_encode, *args, **kwargs)


def test_a_value_set_behind_the_constructor_is_named(engine):
    """A wrong-typed value (the engine declines the object): the Python writer's EncodeError with the path."""
    got = outcome(pbj.encode, _bad_three())
    assert got == outcome(api.python_encode, _bad_three())
    assert got[0] == "error" and got[1] is pbj.EncodeError and got[3] == ["name"]


def test_a_stale_cached_size_is_measured_again(engine):
    """A bytes field grown behind the constructor after the size was cached: right bytes on both paths."""
    o = Three(id=1, name="ab")
    assert pbj.encode(o) == b"\x08\x01\x12\x02ab"
    object.__setattr__(o, "name", "abcd")
    assert pbj.encode(o) == api.python_encode(o) == b"\x08\x01\x12\x04abcd"


def test_the_engine_switch_is_seen_by_the_next_call():
    """use_engine between two calls: each call runs the engine selected when it starts."""
    before = pbj.engine()
    try:
        for name in ENGINES * 2:
            pbj.use_engine(name)
            assert pbj.decode(Three, DATA) == THREE and pbj.encode(THREE) == DATA
    finally:
        pbj.use_engine(before)


def test_decoder_of_and_encoder_of(engine):
    """grpcio's one-argument forms: decode(cls, data), encode(obj); other(obj) for another class."""
    dec = api.decoder_of(Three)
    assert dec(DATA) == THREE and dec(bytearray(DATA)) == THREE
    assert outcome(dec, DATA[:-1]) == outcome(api.python_decode, Three, DATA[:-1])
    assert outcome(api.decoder_of(Needs), b"") == outcome(api.python_decode, Needs, b"")
    seen = []

    def other(obj):
        seen.append(obj)
        return b"other"
    enc = api.encoder_of(Three, other)
    assert enc(THREE) == DATA and seen == []
    assert enc(Money()) == b"other" and seen == [Money()]
    assert outcome(enc, _bad_three()) == outcome(api.python_encode, _bad_three())
    assert outcome(api.encoder_of(Needs, other), Needs()) == outcome(api.python_encode, Needs())


def test_decoder_of_compiles_on_first_use(engine):
    @pbj.message
    class Later:
        x: int = pbj.field(1, "int32")

    dec = api.decoder_of(Later)
    assert Later.__dict__.get("__pbj_codec__") is None
    assert dec(b"\x08\x02") == Later(x=2) == dec(b"\x08\x02")


def test_decoder_of_answers_errors_with_the_handler(engine):
    """catch/handler: a DecodeError becomes the handler's value (a server's INVALID_ARGUMENT); others pass."""
    want = outcome(api.python_decode, Three, DATA[:-1])
    dec = api.decoder_of(Three, pbj.DecodeError, lambda exc: ("handled", type(exc), str(exc), exc.path, exc.offset))
    assert dec(DATA) == THREE
    assert dec(DATA[:-1]) == ("handled", *want[1:])
    assert outcome(dec, "text") == outcome(api.python_decode, Three, "text")  # a TypeError is not caught
    assert outcome(api.decoder_of(Needs, pbj.DecodeError, str), b"") == ("ok", want_required_text())
    with pytest.raises(TypeError):
        api.decoder_of(Three, pbj.DecodeError)


def want_required_text():
    return str(outcome(api.python_decode, Needs, b"")[2])


@built
def test_the_bound_forms_take_one_argument():
    dec, enc = api.decoder_of(Three), api.encoder_of(Three, bytes)
    for fn in (dec, enc):
        with pytest.raises(TypeError, match="exactly one argument"):
            fn()
        with pytest.raises(TypeError, match="exactly one argument"):
            fn(DATA, DATA)
        with pytest.raises(TypeError, match="no keyword arguments"):
            fn(data=DATA)
    assert "Three" in repr(dec.__self__) and "Three" in repr(enc.__self__)


@built
def test_the_bound_forms_keep_the_codec_until_the_class_changes():
    """No Python frame once warm; a native plan taken away or a class attribute changed is seen at once."""
    from pbj import required
    from pbj.codec import codec_of

    @pbj.message
    class Kept:
        x: int = pbj.field(1, "int32")
        name: str = pbj.field(2, "string")

    dec = api.decoder_of(Kept)
    enc = api.encoder_of(Kept, bytes)
    data = b"\x08\x05\x12\x02ab"
    before = pbj.engine()
    pbj.use_engine("native")
    try:
        assert dec(data) == Kept(x=5, name="ab") and enc(Kept(x=5, name="ab")) == data
        assert python_frames(dec, data) == [] and python_frames(enc, Kept(x=5, name="ab")) == []
        codec = codec_of(Kept)
        plan, codec.native = codec.native, None  # the engine no longer runs the class: Python does
        try:
            assert "decode" in python_frames(dec, data) and "encode" in python_frames(enc, Kept(x=1))
            assert dec(data) == Kept(x=5, name="ab") and enc(Kept(x=5, name="ab")) == data
        finally:
            codec.native = plan
        assert python_frames(dec, data) == []
        required.forget_answers()  # FREE taken back (a class attribute deleted): asked again, then cached
        assert Kept.__dict__.get(required.FREE) is None
        assert dec(data) == Kept(x=5, name="ab") and Kept.__dict__.get(required.FREE) is Kept
        assert python_frames(dec, data) == []
        pbj.use_engine("python")
        assert "decode" in python_frames(dec, data) and dec(data) == Kept(x=5, name="ab")
    finally:
        pbj.use_engine(before)
