"""Builds the extension lostflops._lostflops with the project's CMake (the same
build as `make`, tests and benchmarks off) and puts it in the package.
Metadata: pyproject.toml."""
import os
import pathlib
import shutil
import subprocess
import sys

import setuptools
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


def _missing():
    """What the build needs and this python3 or machine lacks, said before a
    minutes-long build rather than after it."""
    need = []
    for tool in ("cmake", "c++"):
        if shutil.which(tool) is None:
            need.append(f"'{tool}' on PATH (Debian: ./scripts/install-deps.sh)")
    # setuptools < 70.1 gets bdist_wheel from the separate 'wheel' package
    # (setuptools 70.1.0 changelog: "bdist_wheel moved into setuptools"); pip
    # --no-build-isolation with a python3 lacking it fails with "invalid
    # command 'bdist_wheel'" only after the build.
    version = tuple(int(p) for p in setuptools.__version__.split(".")[:2] if p.isdigit())
    if version < (70, 1):
        try:
            import wheel  # noqa: F401
        except ImportError:
            need.append(f"the 'wheel' package for setuptools {setuptools.__version__} "
                        f"(Debian: apt install python3-wheel; elsewhere: {sys.executable} -m pip install wheel)")
    return need


if any(arg.startswith(("bdist", "build", "install", "develop", "editable", "dist_info")) for arg in sys.argv[1:]):
    _need = _missing()
    if _need:
        sys.exit("lostflops: cannot build the Python module; missing: " + "; ".join(_need))


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        root = pathlib.Path(__file__).parent.resolve()
        build = pathlib.Path(self.build_temp).resolve() / "cmake"
        build.mkdir(parents=True, exist_ok=True)
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        subprocess.check_call(["cmake", "-S", str(root), "-B", str(build), *generator, "-DCMAKE_BUILD_TYPE=Release",
                               "-DLOSTFLOPS_TESTS=OFF", "-DLOSTFLOPS_BENCH=OFF", "-DLOSTFLOPS_PYTHON=ON",
                               "-DPython_EXECUTABLE=" + sys.executable])
        jobs = str(os.cpu_count() or 1)
        # pip shows this only under `pip install -v` (docs/python.md): the build takes minutes.
        print(f"lostflops: building the extension with CMake in {build} ({jobs} jobs)", file=sys.stderr, flush=True)
        subprocess.check_call(["cmake", "--build", str(build), "--target", "_lostflops", "-j", jobs])
        built = list((build / "python" / "lostflops").glob("_lostflops*.so"))
        if not built:
            raise RuntimeError("CMake did not build _lostflops (is pybind11-dev installed?)")
        dest = pathlib.Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built[0], dest)


setup(ext_modules=[CMakeExtension("lostflops._lostflops")], cmdclass={"build_ext": CMakeBuild})
