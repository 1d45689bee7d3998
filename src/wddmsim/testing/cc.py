"""The compiler kit for tests of native drivers: :mod:`wddmsim.drivers.native.build`, under the test kit's name."""

from wddmsim.drivers.native.build import STRICT_FLAGS, CompileError, Compiler, find_compilers

__all__ = ["STRICT_FLAGS", "CompileError", "Compiler", "find_compilers"]
