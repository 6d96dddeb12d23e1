"""Sphinx configuration of pbj's API reference (built from the docstrings).

Build it with ``python -m sphinx -W -b html docs/api docs/api/_build`` (the
``docs`` extra); ``tests/test_api_reference.py`` runs the same build, warnings
as errors.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pbj

project = "pbj"
author = "the pbj authors"
release = pbj.__version__
version = release
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon"]
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
napoleon_use_ivar = True  # "Attributes:" as fields: no duplicate entries beside properties
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"members": True, "show-inheritance": True}
exclude_patterns = ["_build"]
html_theme = "alabaster"
html_title = f"pbj {release} API reference"
suppress_warnings = ["toc.not_included"]
