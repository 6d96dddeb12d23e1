"""Which engine runs, said plainly: where a binary wheel is expected, the one-line warning, ``pbj doctor``."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig

import pytest

import pbj
from pbj import platforms
from tests.conftest import REPO


@pytest.mark.parametrize(("implementation", "version", "system", "machine", "expected"), [
    ("cpython", (3, 11), "linux", "x86_64", True),
    ("cpython", (3, 14), "linux", "aarch64", True),
    ("cpython", (3, 12), "darwin", "arm64", True),
    ("cpython", (3, 13), "darwin", "x86_64", True),
    ("cpython", (3, 13), "win32", "AMD64", True),
    ("cpython", (3, 14), "win32", "ARM64", True),
    ("cpython", (3, 10), "linux", "x86_64", False),   # older than requires-python
    ("cpython", (3, 15), "linux", "x86_64", False),   # newer than the wheels built
    ("cpython", (3, 14), "emscripten", "wasm32", False),  # Pyodide: the pure wheel
    ("cpython", (3, 12), "linux", "s390x", False),
    ("cpython", (3, 12), "linux", "i686", False),
    ("pypy", (3, 11), "linux", "x86_64", False),
])
def test_where_a_binary_wheel_is_expected(implementation, version, system, machine, expected):
    assert platforms.native_expected(implementation, version, system, machine) is expected


def run_import(env_extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Import pbj in a child whose C extension cannot be imported (as where it was never built)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PBJ_ENGINE", platforms.NO_WARNING_ENV)}
    env.update(env_extra)
    code = ("import sys; sys.modules['pbj._native._engine'] = None\n"
            "import pbj, pbj.platforms; pbj.platforms.warn_if_native_missing()\n"  # a second time: still one line
            "print(pbj.engine())")
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.skipif(not platforms.native_expected(), reason="no binary wheel for this Python and platform")
def test_a_missing_native_engine_is_said_once_in_one_line():
    out = run_import({})
    assert out.returncode == 0, out.stderr
    assert out.stdout == "python\n"
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("pbj:0: NativeEngineMissing: pbj's native engine is missing on CPython ")
    assert sysconfig.get_platform() in lines[0] and platforms.NO_WARNING_ENV in lines[0]


@pytest.mark.parametrize("env", [{platforms.NO_WARNING_ENV: "1"}, {"PBJ_ENGINE": "python"}])
def test_the_warning_is_off_by_a_switch_or_when_python_was_chosen(env):
    out = run_import(env)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "python\n" and out.stderr == ""


def test_doctor_names_engine_python_platform_and_wheel():
    out = subprocess.run([sys.executable, "-m", "pbj", "doctor"], cwd=REPO, capture_output=True, text=True,
                         timeout=300, env={**os.environ, "PBJ_ENGINE": pbj.engine()})
    assert out.returncode == 0, out.stderr
    fields = dict(line.split(":", 1) for line in out.stdout.splitlines())
    assert list(fields) == ["pbj", "engine", "python", "platform", "installed", "binary wheel"]
    assert fields["pbj"].strip() == f"{pbj.__version__} (pbj-protobuf)"
    assert fields["engine"].split()[0] == pbj.engine()
    assert f" {sys.version_info.major}.{sys.version_info.minor}." in fields["python"]
    assert fields["platform"].split()[0] == sysconfig.get_platform()
    tags, _ = platforms.installed_wheel()
    assert fields["installed"].strip().startswith(f"{tags or '-'} (")


def test_report_says_why_python_runs():
    lines = dict(platforms.report("9.9.9", "python", False))
    assert lines["engine"] == "python (the C extension is not built)"
    assert dict(platforms.report("9.9.9", "python", True))["engine"].startswith("python (the C extension is built")
    assert dict(platforms.report("9.9.9", "native", True))["engine"] == "native (the C extension)"
    assert lines["pbj"] == "9.9.9 (pbj-protobuf)"
