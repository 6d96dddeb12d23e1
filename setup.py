"""Build of pbj's optional native engine (all other metadata is in pyproject.toml).

The extension is optional: where no C compiler or no Python headers exist the
build prints a warning and pbj installs without it, running its pure-Python
engine (``pbj.engine()`` says which one is in use).

``PBJ_NO_EXTENSIONS=1`` in the environment of a build leaves the extension out on
purpose: ``PBJ_NO_EXTENSIONS=1 python -m build --wheel`` gives the pure-Python
wheel ``pbj_protobuf-VERSION-py3-none-any.whl`` (for Pyodide and any Python
that no binary wheel covers). CONTRIBUTING.md has the release steps.
"""

import os
from concurrent.futures import ThreadPoolExecutor

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

#: The environment switch that builds without the native engine (a pure ``py3-none-any`` wheel).
NO_EXTENSIONS = os.environ.get("PBJ_NO_EXTENSIONS", "").strip().lower() not in ("", "0", "false", "no")

SOURCES = ("module", "plan", "read", "walk", "decode", "count", "values", "encode", "reverse", "entry", "extensions",
           "arrow", "share", "required")

native = Extension(
    "pbj._native._engine",
    sources=[f"pbj/_native/{name}.c" for name in SOURCES],
    depends=["pbj/_native/engine.h", "pbj/_native/compat.h", "pbj/_native/read.h", "pbj/_native/walk.h",
             "pbj/_native/values.h", "pbj/_native/arrow_abi.h", "pbj/_native/msvc.h"],
    extra_compile_args=["-std=c11", "-O2"],
    optional=True,
)

# Arrow columns to encodings (pbj.arrow.encode_from_arrow): a module of its own, pbj._native._arrow
arrow_encode = Extension(
    "pbj._native._arrow",
    sources=["pbj/_native/arrow_encode.c"],
    depends=["pbj/_native/engine.h", "pbj/_native/arrow_abi.h", "pbj/_native/msvc.h"],
    extra_compile_args=["-std=c11", "-O2"],
    optional=True,
)


def compile_in_parallel(compile, workers):
    """``compile`` (a compiler's ``compile`` method) made to compile up to ``workers`` sources at once.

    setuptools compiles one extension's sources one after another (its ``-j`` runs whole extensions
    at once, and pbj has one large one). The first source is compiled alone, so the compiler is set
    up and the output folder made before any thread starts; each source is then its own compiler
    process. Returns the object files in the order of the sources, as ``compile`` does.
    """

    def run(sources, *args, **kwargs):
        sources = list(sources)
        if workers < 2 or len(sources) < 3:
            return compile(sources, *args, **kwargs)
        objects = compile(sources[:1], *args, **kwargs)
        with ThreadPoolExecutor(workers) as pool:
            for made in pool.map(lambda source: compile([source], *args, **kwargs), sources[1:]):
                objects.extend(made)
        return objects

    return run


class BuildExt(build_ext):
    """GCC's and Clang's flags, or MSVC's: C11, optimized, and pbj/_native/msvc.h forced into every source.

    The sources of an extension compile in parallel, one compiler process per CPU the build may use
    (``os.process_cpu_count``/``os.cpu_count``; ``PBJ_BUILD_JOBS`` sets the number, 1 compiles them
    one after another).
    """

    def build_extension(self, ext):
        if self.compiler.compiler_type == "msvc":
            shim = os.path.abspath(os.path.join("pbj", "_native", "msvc.h"))
            ext.extra_compile_args = ["/std:c11", "/O2", f"/FI{shim}"]
        jobs = os.environ.get("PBJ_BUILD_JOBS", "").strip()
        cpus = getattr(os, "process_cpu_count", os.cpu_count)() or 1
        workers = int(jobs) if jobs.isdigit() and int(jobs) > 0 else cpus
        if "compile" not in vars(self.compiler):  # once per compiler, not once per extension
            self.compiler.compile = compile_in_parallel(self.compiler.compile, workers)
        super().build_extension(ext)


setup(ext_modules=[] if NO_EXTENSIONS else [native, arrow_encode], cmdclass={"build_ext": BuildExt})
