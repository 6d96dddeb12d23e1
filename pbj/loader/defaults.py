"""Default values of proto2 fields, parsed from the text protoc writes (``default_value``).

descriptor.proto: "For numeric types, contains the original text representation
of the value. For booleans, "true" or "false". For strings, contains the default
text contents (not escaped in any way). For bytes, contains the C escaped value."
"""

from __future__ import annotations

import enum
import math
from typing import Any

from pbj.errors import SchemaError
from pbj.scalars import fixed_packer

__all__ = ["parse_default"]

_F32 = fixed_packer("float")


def _unescape_bytes(text: str) -> bytes:
    """Undo the C escaping protoc applies to a ``bytes`` field's ``default_value``."""
    out = bytearray()
    raw = text.encode("latin-1", "backslashreplace") if all(ord(c) < 256 for c in text) else text.encode()
    i, n = 0, len(raw)
    simple = {ord("n"): 10, ord("r"): 13, ord("t"): 9, ord('"'): 34, ord("'"): 39, ord("\\"): 92,
              ord("a"): 7, ord("b"): 8, ord("f"): 12, ord("v"): 11, ord("?"): 63}
    while i < n:
        c = raw[i]
        if c != 92 or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        d = raw[i + 1]
        if d in simple:
            out.append(simple[d])
            i += 2
        elif 48 <= d <= 55:
            j = i + 1
            while j < n and j < i + 4 and 48 <= raw[j] <= 55:
                j += 1
            out.append(int(raw[i + 1:j], 8) & 0xFF)
            i = j
        elif d in (ord("x"), ord("X")):
            j = i + 2
            while j < n and j < i + 4 and chr(raw[j]) in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(raw[i + 2:j] or b"0", 16) & 0xFF)
            i = j
        else:
            out.append(d)
            i += 2
    return bytes(out)


def parse_default(text: str, ftype: Any, full: str, fname: str) -> Any:
    """A proto2 ``default_value`` (text as protoc writes it) as a Python value.

    Args:
        text: the ``FieldDescriptorProto.default_value`` text.
        ftype: the field's pbj type (a scalar name or an enum class).
        full: the message's full name, fname: the field's name (for errors).

    Returns:
        The value (an enum member, ``float``, ``bool``, ``str``, ``bytes``,
        ``int``), or ``None`` for a type without defaults.

    Raises:
        SchemaError: the text does not fit the field's type.
    """
    try:
        if isinstance(ftype, type) and issubclass(ftype, enum.IntEnum):
            return ftype.__members__.get(text, ftype.__members__.get(text + "_"))
        if ftype == "double":
            return float(text)
        if ftype == "float":  # the value a float field holds: rounded to 32 bits
            value = float(text)
            return value if not math.isfinite(value) else _F32.unpack(_F32.pack(value))[0]
        if ftype == "bool":
            return text == "true"
        if ftype == "string":
            return text
        if ftype == "bytes":
            return _unescape_bytes(text)
        if isinstance(ftype, str):
            return int(text, 0)
    except ValueError:
        raise SchemaError(f"default value {text!r} does not fit the field's type", cls_name=full,
                          field_name=fname) from None
    return None
