"""A first round trip through every writer and the parser."""

import pbj


@pbj.message
class Ts:
    seconds: int = pbj.field(1, "int64")
    nanos: int = pbj.field(2, "int32")


def test_round_trip_both_writers():
    value = Ts(seconds=150, nanos=-1)
    expected = bytes.fromhex("089601") + bytes.fromhex("10ffffffffffffffffff01")
    assert pbj.encode(value) == expected
    assert pbj.encode(value, reverse=True) == expected
    assert pbj.decode(Ts, expected) == value


def test_subpackages_reachable_after_a_plain_import_yet_loaded_on_first_use():
    """``import pbj`` loads what encode/decode need only, and ``pbj.protojson``, ``pbj.textformat``,
    ``pbj.descriptor``... are still reachable as attributes (they are imported on first use; the
    loader's and the extensions' entry points are small and imported with pbj); nor are attrs, inspect
    or importlib.metadata (``pbj doctor``'s, imported only when the native engine is missing)."""
    import subprocess
    import sys
    code = ("import sys, pbj\n"
            "lazy = ['pbj.protojson', 'pbj.textformat', 'pbj.descriptor', 'pbj.features', 'pbj.platforms',\n"
            "        'importlib.metadata', 'attrs', 'inspect']\n"
            "print([m in sys.modules for m in lazy])\n"
            "print([callable(pbj.protojson.register_types), callable(pbj.textformat.from_text),\n"
            "       callable(pbj.loader.load_descriptor_set), callable(pbj.extensions.extension),\n"
            "       hasattr(pbj.descriptor, '__file__'), callable(pbj.features.resolve)])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split("\n")[:2] == [str([False] * 8), str([True] * 6)], out.stdout + out.stderr
