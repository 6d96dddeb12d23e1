"""Replay every input that ever made a fuzz check fail (``tests/regressions/``).

A file's name says which check replays it: ``decode-<target>-…`` runs
:func:`fuzz.targets.check_decode` on the named target (``maps``, ``node``,
``proto2``, ``blockitem`` …), ``json-<target>-…`` runs
:func:`fuzz.targets.check_json` on that target's class, ``loader-…`` runs
:func:`fuzz.targets.check_loader`. New failures from a long run land in
``fuzz/crashes/`` (see ``fuzz/README.md``); once fixed, move them here.

The faults these files found, and their fixes, are listed in ``docs/security.md``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import pbj
from fuzz import targets as T

CORPUS = Path(__file__).resolve().parent / "regressions"
FILES = sorted(p for p in CORPUS.iterdir() if p.is_file() and p.name != "README.md")


def test_corpus_is_not_empty():
    assert {p.name.split("-")[0] for p in FILES} >= {"decode", "loader"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_replay(path):
    data = path.read_bytes()
    kind, _, rest = path.name.partition("-")
    if kind == "decode":
        T.check_decode(T.target(rest.split("-")[0]), data)
    elif kind == "json":
        T.check_json(T.target(rest.split("-")[0]).cls, data)
    elif kind == "loader":
        T.check_loader(data)
    else:
        pytest.fail(f"{path.name}: unknown check {kind!r}")


def test_map_entry_with_an_unknown_field_is_kept_whole():
    """The first fault (upb as oracle): the entry goes to the unknown fields, not into the map."""
    t = T.target("maps")
    data = (CORPUS / "decode-maps-entry-with-unknown-field.bin").read_bytes()
    expected = t.google.FromString(data)
    assert len(expected.int64_key) == 0
    obj = pbj.decode(t.cls, data)
    assert len(obj.int64_key) == 0
    assert pbj.unknown_fields(obj) == data
    assert pbj.encode(obj) == expected.SerializeToString(deterministic=True)
    assert pbj.encode(obj, reverse=True) == expected.SerializeToString(deterministic=True)


def test_reference_to_a_map_entry_fails_the_load():
    """The loader fault: a group typed as a map entry left a class that could not compile."""
    data = (CORPUS / "loader-group-typed-as-map-entry.binpb").read_bytes()
    with pytest.raises(pbj.SchemaError):
        pbj.load_descriptor_set(data, lazy=False)
    with pytest.raises(pbj.SchemaError):  # a lazy load refuses the class when it is built
        pbj.load_descriptor_set(data).build_all()
