"""Builds the `loom` package: a CPython extension over Loom's public C API.

The extension links the libloom.so of a Loom build directory, named by the
LOOM_BUILD_DIR environment variable (default: ../build next to this
directory), and records that directory as its run path, so that `import
loom` finds the library without LD_LIBRARY_PATH. The headers come from
LOOM_SOURCE_DIR/include (default: the checkout this file is in).
"""

import os

from setuptools import Extension, setup

here = os.path.dirname(os.path.abspath(__file__))
source_dir = os.path.abspath(
    os.environ.get("LOOM_SOURCE_DIR", os.path.join(here, "..")))
build_dir = os.path.abspath(
    os.environ.get("LOOM_BUILD_DIR", os.path.join(source_dir, "build")))


def library_dir():
    for candidate in (os.path.join(build_dir, "src"), build_dir):
        if os.path.exists(os.path.join(candidate, "libloom.so")):
            return candidate
    raise SystemExit(
        f"libloom.so not found under {build_dir}: build Loom first and set "
        "LOOM_BUILD_DIR to its build directory")


lib_dir = library_dir()

setup(
    name="loom",
    version="0.1.0",
    description="Python front end of the Loom tensor runtime",
    packages=["loom"],
    python_requires=">=3.10",
    ext_modules=[
        Extension(
            "loom._loom",
            sources=["loom/_loom.c", "loom/_execute.c", "loom/_handlers.c",
                     "loom/_python_handler.c", "loom/_dlpack.c"],
            depends=["loom/_loom.h"],
            include_dirs=[os.path.join(source_dir, "include")],
            library_dirs=[lib_dir],
            runtime_library_dirs=[lib_dir],
            libraries=["loom"],
            extra_compile_args=["-std=c11", "-Wall", "-Wextra",
                                "-Wno-missing-field-initializers"],
        )
    ],
)
