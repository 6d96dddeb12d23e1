"""Public names of ``pbj`` whose modules are imported on first use, without a module ``__getattr__``.

``import pbj`` loads what encoding and decoding need; ProtoJSON, the text format and the
editions tables are imported when first used. A module-level ``__getattr__`` (PEP 562)
would do that, but CPython then never specialises an attribute load on the module
(``LOAD_ATTR_MODULE``), so every ``pbj.encode(...)`` would pay a slow lookup. Instead,
``pbj``'s namespace holds ordinary entries:

* :class:`DeferredFunction` for a function of such a module: the first call (or the first
  read of its ``__doc__``, ``__wrapped__`` ...) imports the module and puts the real function
  in ``pbj``'s namespace in its place, so ``pbj.to_json is pbj.protojson.to_json`` from then
  on and later calls cost nothing extra;
* :class:`DeferredModule` for a subpackage (``pbj.protojson`` after a plain ``import pbj``):
  reading an attribute of it imports the real module, which replaces it as ``pbj``'s
  attribute, as every submodule import does.

Both are safe under threads: the import system's lock makes the import happen once, and
the replacement stores the same object from every thread.
"""

from __future__ import annotations

import importlib
import types
from typing import Any

__all__ = ["DeferredFunction", "DeferredModule"]


class DeferredFunction:
    """A function of a module imported on the first call (see the module docstring).

    Args:
        home: the namespace that holds this stand-in (``pbj``'s globals), where the real
            function replaces it.
        module: the module that defines the function (``"pbj.protojson"``).
        name: the function's name, in ``module`` and in ``home``.
    """

    __slots__ = ("_home", "_module", "_name")

    def __init__(self, home: dict[str, Any], module: str, name: str) -> None:
        self._home = home
        self._module = module
        self._name = name

    def resolve(self) -> Any:
        """Import the module, put the real function in the home namespace, and return it.

        Raises:
            ImportError: the module cannot be imported (a broken installation).
        """
        target = getattr(importlib.import_module(self._module), self._name)
        if self._home.get(self._name) is self:
            self._home[self._name] = target
        return target

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.resolve()(*args, **kwargs)

    @property
    def __wrapped__(self) -> Any:  # inspect.signature and inspect.unwrap follow it
        return self.resolve()

    @property
    def __doc__(self) -> str | None:  # type: ignore[override]  # help() and Sphinx read the real function's
        return self.resolve().__doc__  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:  # __name__, __module__, __defaults__ ...: the real function's
        if name.startswith("_") and not name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.resolve(), name)

    def __repr__(self) -> str:
        return f"<function {self._module}.{self._name} (imported on first use)>"


class DeferredModule(types.ModuleType):
    """A subpackage of ``pbj`` not imported yet: reading an attribute of it imports it.

    The import makes the real module ``pbj``'s attribute (the import system sets it on the
    parent package); this stand-in keeps forwarding to it for code that holds it.
    """

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module(self.__name__), name)

    def __dir__(self) -> list[str]:
        return dir(importlib.import_module(self.__name__))

    def __repr__(self) -> str:
        return f"<module {self.__name__!r} (imported on first use)>"
