"""``import pbj`` is small, and ``pbj.encode`` is an ordinary module attribute that CPython specialises.

``pbj`` has no module-level ``__getattr__`` (which would keep CPython from specialising
``LOAD_ATTR`` on the module): the names whose modules load on first use are entries of
:mod:`pbj.deferred`, which put the real object in place on first use.
"""

from __future__ import annotations

import dis
import io
import subprocess
import sys
import textwrap
import types

import pytest

import pbj

_CPYTHON = sys.implementation.name == "cpython"


@pbj.message
class Point:
    x: int = pbj.field(1, "int32")
    y: int = pbj.field(2, "int32")


def _adaptive_text(func) -> str:
    out = io.StringIO()
    dis.dis(func, adaptive=True, file=out)
    return out.getvalue()


def _call_pbj_encode(obj):
    return pbj.encode(obj)


@pytest.mark.skipif(not _CPYTHON, reason="the adaptive interpreter is CPython's")
def test_pbj_encode_specialises_as_a_module_attribute():
    point = Point(x=1, y=2)
    for _ in range(200):  # past the adaptive counters' warm-up
        assert _call_pbj_encode(point) == b"\x08\x01\x10\x02"
    assert "LOAD_ATTR_MODULE" in _adaptive_text(_call_pbj_encode)


@pytest.mark.skipif(not _CPYTHON, reason="the adaptive interpreter is CPython's")
def test_a_module_getattr_would_stop_the_specialisation():
    """The control: the same check on a module with a ``__getattr__`` (what pbj had) finds no
    ``LOAD_ATTR_MODULE``, so the test above can fail."""
    lazy = types.ModuleType("lazy_control")
    lazy.encode = pbj.encode
    lazy.__getattr__ = lambda name: None  # PEP 562

    def call(obj, module=lazy):
        return module.encode(obj)

    for _ in range(200):
        call(Point(x=1))
    assert "LOAD_ATTR_MODULE" not in _adaptive_text(call)


def test_import_pbj_loads_no_machinery_it_does_not_need():
    """A fresh ``import pbj`` leaves attrs, inspect, ProtoJSON, the text format, the descriptor classes
    and the editions tables unimported; they load when first used, and every public name works."""
    code = textwrap.dedent("""
        import sys
        import pbj
        heavy = ["attrs", "attr", "inspect", "dataclasses", "cattrs", "pbj.protojson", "pbj.textformat",
                 "pbj.descriptor", "pbj.features", "pbj.wellknown", "pbj.schema.declared_features"]
        print(sorted(m for m in heavy if m in sys.modules))
        assert all(hasattr(pbj, name) for name in pbj.__all__)
        print(issubclass(pbj.JSONError, pbj.DecodeError), issubclass(pbj.TextError, pbj.PbjError))
        print(pbj.protojson.register_types.__module__, "pbj.protojson" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.splitlines() == ["[]", "True True", "pbj.protojson.registry True"]


def test_deferred_functions_become_the_real_ones():
    code = textwrap.dedent("""
        import inspect
        import pbj
        import pbj.protojson
        stand_in = pbj.to_dict
        assert "Returns" in stand_in.__doc__ and "obj" in inspect.signature(pbj.to_json).parameters
        @pbj.message
        class P:
            x: int = pbj.field(1, "int32")
        assert stand_in(P(x=3)) == {"x": 3}
        assert pbj.to_dict is pbj.protojson.to_dict and pbj.to_json is pbj.protojson.to_json
        try:
            pbj.from_json(P, "[1]")
        except pbj.JSONError as exc:
            assert type(exc) is pbj.protojson.JSONError
        assert pbj.from_text(P, "x: 4") == P(x=4) and pbj.from_text is pbj.textformat.from_text
        assert "to_json" in dir(pbj) and "protojson" in dir(pbj)
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.split() == ["ok"]


def test_deferred_module_forwards_before_and_after_its_import():
    code = textwrap.dedent("""
        import sys
        import pbj
        held = pbj.textformat  # a stand-in: nothing imported yet
        assert "pbj.textformat" not in sys.modules and held.__name__ == "pbj.textformat"
        assert held.TextError is pbj.TextError and "pbj.textformat" in sys.modules
        assert pbj.textformat is sys.modules["pbj.textformat"] and "to_text" in dir(held)
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.split() == ["ok"]
