"""Builds the extension lostflops._lostflops with the project's CMake (the same
build as `make`, tests and benchmarks off) and puts it in the package.
Metadata: pyproject.toml."""
import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


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
        subprocess.check_call(["cmake", "--build", str(build), "--target", "_lostflops", "-j", jobs])
        built = list((build / "python" / "lostflops").glob("_lostflops*.so"))
        if not built:
            raise RuntimeError("CMake did not build _lostflops (is pybind11-dev installed?)")
        dest = pathlib.Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built[0], dest)


setup(ext_modules=[CMakeExtension("lostflops._lostflops")], cmdclass={"build_ext": CMakeBuild})
