"""Build the compiled kernel core (``opendml._core._native``); everything else is in pyproject.toml.

The kernel translation unit ``kernels.c`` is compiled once per instruction set (baseline C; AVX2+FMA+F16C;
AVX-512F/BW/VL/DQ) with its own ``-m`` flags and a suffix macro, and linked into one extension whose
``module.c`` (built for the baseline) picks a variant at import by CPU detection. Non-x86 machines build the
baseline only. ``OPENDML_SANITIZE=1`` builds with ASan + UBSan (CI's sanitizer step). Each variant's vectors
are one register of its ISA (simd.h), which GCC and clang both compile well.
"""

from __future__ import annotations

import os
import platform
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

CORE = "src/opendml/_core"
X86 = platform.machine().lower() in ("x86_64", "amd64", "i686", "x86") and sys.platform != "win32"
# (name, flags): the per-ISA variants of kernels.c; the baseline variant is always built.
ISA_VARIANTS = [("baseline", [])]
if X86:
    ISA_VARIANTS += [
        ("avx2", ["-mavx2", "-mfma", "-mf16c"]),
        ("avx512", ["-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq", "-mavx2", "-mfma", "-mf16c"]),
    ]
# -ffp-contract=off: a*x+b must round twice (HARD_SIGMOID is bit-identical to NumPy), never fuse into an FMA.
WARNINGS = ["-Wall", "-Wextra", "-Werror", "-Wshadow", "-Wstrict-prototypes", "-Wno-unused-parameter"]
COMMON = ["-std=c11", "-O3", "-ffp-contract=off", "-fno-math-errno", "-fvisibility=hidden", *WARNINGS]
SANITIZE = os.environ.get("OPENDML_SANITIZE") == "1"
if SANITIZE:
    COMMON += ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined", "-fno-omit-frame-pointer", "-g"]


class BuildISAVariants(build_ext):
    """Compile kernels.c once per ISA (each into its own folder, with its own flags), then link them all."""

    def build_extension(self, ext: Extension) -> None:
        # -Wpsabi is a note about passing wide vectors between differently compiled units: ours never cross.
        psabi = ["-Wno-psabi"]
        objects = []
        for name, flags in ISA_VARIANTS:
            objects += self.compiler.compile(
                [f"{CORE}/kernels.c"],
                output_dir=os.path.join(self.build_temp, "isa", name),
                macros=[("ODML_ISA", name)],
                include_dirs=[CORE],
                extra_postargs=[*COMMON, *psabi, *flags],
                debug=self.debug,
            )
        ext.extra_objects = objects
        ext.extra_compile_args = [*COMMON, *psabi]
        super().build_extension(ext)


def numpy_include() -> str:
    import numpy

    return numpy.get_include()


core = Extension(
    "opendml._core._native",
    sources=[f"{CORE}/module.c", f"{CORE}/pool.c"],
    include_dirs=[CORE, numpy_include()],
    define_macros=[
        ("NPY_NO_DEPRECATED_API", "NPY_2_0_API_VERSION"),
        *[(f"ODML_HAVE_{name.upper()}", "1") for name, _ in ISA_VARIANTS],
    ],
    extra_link_args=["-pthread", *(["-fsanitize=address,undefined"] if SANITIZE else [])],
    libraries=["m"],
    depends=[f"{CORE}/{f}" for f in ("kernels.c", "engine.h", "simd.h", "ops.h")],
)

setup(ext_modules=[core], cmdclass={"build_ext": BuildISAVariants})
