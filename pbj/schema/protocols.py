"""Python protocols every message class takes part in, beyond attrs': ``copy.replace`` and pydantic.

:func:`pbj.schema.make_class.make_class` puts these into each new class (a class body that
defines one of them keeps its own):

* ``__replace__``: Python 3.13's ``copy.replace(msg, field=value)`` protocol, meaning
  :func:`pbj.replace` (a changed, checked copy; unset fields stay unset). On 3.11 and 3.12
  ``pbj.replace`` is the same call. attrs' own ``__replace__`` (``attrs.evolve``) is not used:
  it would give a field with a declared default its default instead of leaving it unset;
* ``__get_pydantic_core_schema__`` and ``__get_pydantic_json_schema__``: the hooks pydantic v2
  looks for on a foreign type (pbj message classes as model fields and FastAPI bodies). They
  import :mod:`pbj.pydantic` by name on their first call: pydantic is an optional dependency,
  and that module sits above this package (it reads ProtoJSON), so the schema layer names it
  rather than importing it.
"""

from __future__ import annotations

import importlib
from typing import Any

from pbj.schema.resolve import replace

__all__ = ["PROTOCOLS"]


def __replace__(self: Any, /, **changes: Any) -> Any:
    """``copy.replace(self, **changes)``: :func:`pbj.replace`."""
    return replace(self, **changes)


def __get_pydantic_core_schema__(cls: type, source: Any, handler: Any) -> Any:
    """pydantic's schema of this message class: :func:`pbj.pydantic.core_schema`."""
    return importlib.import_module("pbj.pydantic").core_schema(cls, handler)


def __get_pydantic_json_schema__(cls: type, core_schema: Any, handler: Any) -> Any:
    """The JSON Schema of this message class's ProtoJSON form: :func:`pbj.pydantic.json_schema`."""
    return importlib.import_module("pbj.pydantic").json_schema(cls, handler)


#: Attribute name -> the value each message class gets (unless its body defines the name).
PROTOCOLS: dict[str, Any] = {
    "__replace__": __replace__,
    "__get_pydantic_core_schema__": classmethod(__get_pydantic_core_schema__),
    "__get_pydantic_json_schema__": classmethod(__get_pydantic_json_schema__),
}
