"""``Any``: pack a message, unpack it to its class, test its type."""

from __future__ import annotations

from typing import Any as _Any

from pbj.api import decode, encode
from pbj.errors import PbjError
from pbj.protojson.registry import resolve_any
from pbj.schema import info, is_message
from pbj.wkt._common import PKG, check, class_of, make

__all__ = ["UnknownTypeError", "DEFAULT_TYPE_URL_PREFIX", "pack", "unpack", "is_type", "type_name"]

#: The type URL prefix ``pack`` uses by default (the one Google's runtimes use).
DEFAULT_TYPE_URL_PREFIX = "type.googleapis.com/"


class UnknownTypeError(PbjError, LookupError):
    """An ``Any`` names a type that no loaded schema, registered or declared class has.

    Attributes:
        type_url: the ``Any``'s type URL.
    """

    def __init__(self, type_url: str, *, give_class: str = "pbj.wkt.unpack(any, cls)") -> None:
        """``give_class``: the call that takes the class, as the text suggests it."""
        self.type_url = type_url
        super().__init__(f"no message class is known for the Any type URL {type_url!r}: load its schema "
                         "(pbj.load_descriptor_set / pbj.load_proto), register the class with "
                         f"pbj.protojson.register_types, or pass the class: {give_class}")


def pack(msg: _Any, *, type_url_prefix: str = DEFAULT_TYPE_URL_PREFIX, cls: type | None = None) -> _Any:
    """An ``Any`` holding ``msg``: its type URL (prefix + full name) and its encoding.

    Raises:
        TypeError: ``msg`` is not a pbj message, or ``type_url_prefix`` is not a ``str``.
        EncodeError: ``msg`` cannot be encoded.
    """
    if not is_message(type(msg)):
        raise TypeError(f"pack needs a pbj message, got {type(msg).__name__}")
    if not isinstance(type_url_prefix, str):
        raise TypeError(f"pack: type_url_prefix must be a str, not {type(type_url_prefix).__name__}")
    sep = "" if type_url_prefix.endswith("/") else "/"
    url = f"{type_url_prefix}{sep}{info(type(msg)).full_name}"
    return make(class_of(cls, PKG + "Any"), type_url=url, value=encode(msg))


def type_name(any_msg: _Any) -> str:
    """The full name of the type an ``Any`` holds (its type URL after the last ``/``)."""
    a = check(any_msg, PKG + "Any")
    return getattr(any_msg, a["type_url"]).rpartition("/")[2]


def is_type(any_msg: _Any, cls: type) -> bool:
    """Whether the ``Any`` holds a message of class ``cls`` (compared by full name)."""
    if not (isinstance(cls, type) and is_message(cls)):
        raise TypeError(f"{cls!r} is not a pbj message class")
    return type_name(any_msg) == info(cls).full_name


def unpack(any_msg: _Any, cls: type | None = None) -> _Any:
    """The message an ``Any`` holds, decoded as ``cls`` or as the class its type URL names.

    Without ``cls`` the class is looked up by full name among loaded schemas
    (the last load of each name), classes given to
    ``pbj.protojson.register_types`` or met by the JSON converters, and
    :mod:`pbj.wellknown`.

    Raises:
        TypeError: ``cls`` is given and the ``Any`` holds another type.
        UnknownTypeError: no class is known for the type URL (a ``LookupError``).
        DecodeError: the value is not a valid encoding of that type.
    """
    a = check(any_msg, PKG + "Any")
    url, data = getattr(any_msg, a["type_url"]), getattr(any_msg, a["value"])
    if cls is None:
        cls = resolve_any(url)
        if cls is None:
            raise UnknownTypeError(url)
    elif not is_type(any_msg, cls):
        raise TypeError(f"the Any holds {type_name(any_msg)!r}, not {info(cls).full_name!r}")
    return decode(cls, data)
