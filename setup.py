"""Build of pbj's optional native engine (all other metadata is in pyproject.toml).

The extension is optional: where no C compiler or no Python headers exist the
build prints a warning and pbj installs without it, running its pure-Python
engine (``pbj.engine()`` says which one is in use).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "pbj._native._engine",
            sources=[f"pbj/_native/{name}.c"
                     for name in ("module", "plan", "read", "decode", "values", "encode", "reverse", "entry",
                                  "extensions", "arrow", "share", "required")],
            depends=["pbj/_native/engine.h", "pbj/_native/read.h", "pbj/_native/values.h"],
            extra_compile_args=["-std=c11", "-O2"],
            optional=True,
        )
    ]
)
