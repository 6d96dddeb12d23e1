"""The distribution's metadata: an SPDX license expression, the LICENSE and NOTICE files shipped
(the wheel's ``.dist-info/licenses``), no setuptools deprecation warning."""

from __future__ import annotations

import subprocess
import sys
import tomllib

import pytest

from tests.conftest import REPO

LICENSE_FILES = ["LICENSE", "NOTICE", "pbj/data/NOTICE", "pbj/data/conformance/NOTICE", "pbj/data/protovalidate/NOTICE"]


def test_pyproject_declares_an_spdx_license_and_a_setuptools_that_reads_it():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert project["project"]["license"] == "Apache-2.0"
    assert project["project"]["license-files"] == LICENSE_FILES
    assert "setuptools>=77" in project["build-system"]["requires"]  # PEP 639 fields: setuptools 77
    assert "Apache License" in (REPO / "LICENSE").read_text() and "Version 2.0" in (REPO / "LICENSE").read_text()
    notice = (REPO / "NOTICE").read_text()
    assert all(f in notice for f in LICENSE_FILES[2:])


@pytest.mark.static
def test_wheel_metadata_carries_the_license_files(tmp_path):
    code = ("import setuptools.build_meta as b, sys; "
            "print(b.prepare_metadata_for_build_wheel(sys.argv[1]))")
    out = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", code, str(tmp_path)], cwd=REPO,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    info = tmp_path / out.stdout.strip().splitlines()[-1]
    metadata = (info / "METADATA").read_text()
    assert "License-Expression: Apache-2.0" in metadata
    assert [line[len("License-File: "):] for line in metadata.splitlines() if line.startswith("License-File: ")] \
        == LICENSE_FILES
    assert (info / "licenses" / "LICENSE").read_bytes() == (REPO / "LICENSE").read_bytes()
    assert (info / "licenses" / "pbj" / "data" / "NOTICE").is_file()
