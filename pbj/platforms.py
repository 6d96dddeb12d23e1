"""Where pbj's native engine comes in a binary wheel, and what this interpreter and install are (``pbj doctor``).

The release build (``pyproject.toml``'s ``[tool.cibuildwheel]``, docs/install.md) publishes wheels with
the native engine for CPython 3.11-3.14 (and 3.14t, free-threaded) on Linux (manylinux and musllinux:
x86_64, aarch64), macOS (x86_64, arm64) and Windows (x86_64, ARM64); every other Python gets the
pure-Python wheel. :func:`native_expected` says whether this interpreter is one of the first kind;
:func:`warn_if_native_missing` is called by :mod:`pbj._native` when the engine failed to import, and
prints one line (a :class:`NativeEngineMissing` warning) when it was expected; :func:`report` gives
the lines ``pbj doctor`` prints.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import sysconfig
import warnings
from importlib import metadata

__all__ = ["DISTRIBUTION", "NO_WARNING_ENV", "WHEEL_PYTHONS", "WHEEL_PLATFORMS", "NativeEngineMissing",
           "native_expected", "warn_if_native_missing", "installed_wheel", "gil_state", "report"]

#: The distribution pbj is installed as.
DISTRIBUTION = "pbj-protobuf"
#: Set to a non-empty value other than ``0`` to silence :class:`NativeEngineMissing`.
NO_WARNING_ENV = "PBJ_NO_ENGINE_WARNING"
#: The CPython versions (major, minor) with binary wheels.
WHEEL_PYTHONS = frozenset({(3, 11), (3, 12), (3, 13), (3, 14)})
#: ``sys.platform`` -> the processors (``platform.machine()``, lower case) with binary wheels there.
WHEEL_PLATFORMS = {"linux": frozenset({"x86_64", "aarch64", "arm64"}),
                   "darwin": frozenset({"x86_64", "arm64"}),
                   "win32": frozenset({"amd64", "x86_64", "arm64", "aarch64"})}


class NativeEngineMissing(RuntimeWarning):
    """pbj runs its pure-Python engine where a binary wheel with the native engine exists.

    Raised (as a warning, once, at ``import pbj``) when the C extension failed to import on a
    CPython and platform of :data:`WHEEL_PYTHONS` and :data:`WHEEL_PLATFORMS`: pbj was installed
    from the sdist where no C compiler worked, or the extension was removed. Not raised when
    ``PBJ_ENGINE=python`` chose the pure-Python engine, nor when :data:`NO_WARNING_ENV` is set.
    """


def native_expected(implementation: str | None = None, version: tuple[int, int] | None = None,
                    system: str | None = None, machine: str | None = None) -> bool:
    """Whether a binary wheel with the native engine exists for this interpreter (or the one described).

    Args:
        implementation: ``sys.implementation.name`` (``"cpython"``, ``"pypy"`` ...); default this one's.
        version: (major, minor); default this interpreter's.
        system: ``sys.platform`` (``"linux"``, ``"darwin"``, ``"win32"``, ``"emscripten"`` ...); default this one.
        machine: ``platform.machine()`` (``"x86_64"``, ``"AMD64"``, ``"arm64"`` ...); default this one.

    Returns:
        True for CPython 3.11-3.14 on a platform and processor of :data:`WHEEL_PLATFORMS`.
    """
    implementation = sys.implementation.name if implementation is None else implementation
    version = tuple(sys.version_info[:2]) if version is None else version  # type: ignore[assignment]
    system = sys.platform if system is None else system
    machine = platform.machine() if machine is None else machine
    return (implementation == "cpython" and version in WHEEL_PYTHONS
            and machine.lower() in WHEEL_PLATFORMS.get(system, frozenset()))


def _switched_on(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no")


def warn_if_native_missing() -> bool:
    """Warn (:class:`NativeEngineMissing`, one line) that the native engine was expected and is missing.

    Called by :mod:`pbj._native` when its C extension did not import. Silent when no wheel exists
    for this interpreter (:func:`native_expected`), when ``PBJ_ENGINE=python`` chose the
    pure-Python engine anyway, and when ``PBJ_NO_ENGINE_WARNING`` is set.

    Returns:
        True when the warning was issued.
    """
    if not native_expected() or _switched_on(NO_WARNING_ENV) or os.environ.get("PBJ_ENGINE") == "python":
        return False
    message = (f"pbj's native engine is missing on {platform.python_implementation()} {platform.python_version()} "
               f"({sysconfig.get_platform()}), which has a binary wheel with it: the pure-Python engine runs, "
               f"several times slower (pip install --force-reinstall --only-binary {DISTRIBUTION} {DISTRIBUTION} "
               f"installs the wheel; {NO_WARNING_ENV}=1 silences this; pbj doctor says more)")
    # reported as from "pbj", line 0: one line on stderr (no source line follows); the registry keeps it to
    # once per process under the default filters
    warnings.warn_explicit(message, NativeEngineMissing, "pbj", 0, module="pbj", registry=_WARNED)
    return True


#: The warnings registry of :func:`warn_if_native_missing` (what :mod:`warnings` shows only once).
_WARNED: dict = {}


def installed_wheel() -> tuple[str, str]:
    """How pbj is installed: (the wheel's tags, how) from the distribution's ``WHEEL`` and ``direct_url.json``.

    Returns:
        (the wheel's tags joined by ``", "``, how: ``"wheel"`` from an index, ``"editable install of DIR"``,
        ``"local wheel URL"``, ``"local build URL"`` or ``"not installed ..."``). The tags are empty when
        pbj is not installed (imported from a source tree).
    """
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "", "not installed (imported from a source tree)"
    tags = [line.split(":", 1)[1].strip() for line in (dist.read_text("WHEEL") or "").splitlines()
            if line.startswith("Tag:")]
    how = "wheel"
    direct = dist.read_text("direct_url.json")
    if direct:
        info = json.loads(direct)
        if info.get("dir_info", {}).get("editable"):
            how = f"editable install of {info.get('url', '?').removeprefix('file://')}"
        else:
            how = f"local {'wheel' if info.get('url', '').endswith('.whl') else 'build'} {info.get('url', '?')}"
    return ", ".join(tags), how


def gil_state() -> str:
    """``"GIL"`` on a default build; on a free-threaded build, whether the GIL is on now and why it may be."""
    if not sysconfig.get_config_var("Py_GIL_DISABLED"):
        return "GIL"
    enabled = getattr(sys, "_is_gil_enabled", lambda: True)()
    return ("free-threaded build, GIL enabled (an extension module that does not declare free-threading support, "
            "or PYTHON_GIL=1, turned it on)" if enabled else "free-threaded build, GIL disabled")


def report(version: str, engine: str, native_built: bool) -> list[tuple[str, str]]:
    """The lines of ``pbj doctor``: (name, value) for pbj, its engine, the Python, the platform and the wheel.

    Args:
        version: pbj's version (``pbj.__version__``).
        engine: the engine in use (``pbj.engine()``: ``"native"`` or ``"python"``).
        native_built: whether the C extension imported (``pbj._native.available()``).

    Returns:
        A list of (name, value) pairs, in the order printed.
    """
    if engine == "native":
        engine_line = "native (the C extension)"
    elif native_built:
        engine_line = "python (the C extension is built; PBJ_ENGINE=python or use_engine chose Python)"
    else:
        engine_line = "python (the C extension is not built)"
    tags, how = installed_wheel()
    expected = native_expected()
    libc = " ".join(part for part in platform.libc_ver() if part)
    return [
        ("pbj", f"{version} ({DISTRIBUTION})"),
        ("engine", engine_line),
        ("python", f"{platform.python_implementation()} {platform.python_version()} ({gil_state()}) "
                   f"at {sys.executable}"),
        ("platform", f"{sysconfig.get_platform()} ({platform.machine()}{', ' + libc if libc else ''})"),
        ("installed", f"{tags or '-'} ({how})"),
        ("binary wheel", "built by every release for this Python and platform" if expected
         else "none for this Python and platform: the pure-Python wheel is the one to use"),
    ]
