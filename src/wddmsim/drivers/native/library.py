"""Loading a driver's shared library, one private instance per adapter.

A kernel-mode driver keeps per-adapter state in globals (the samples do), and ``dlopen`` of one path twice returns
the same instance.  So each adapter loads its own copy: the file is copied to a private temporary name, opened
with ``RTLD_LOCAL`` and the copy unlinked at once (the mapping stays).  :meth:`NativeLibrary.close` lets it go.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import tempfile
from pathlib import Path
from typing import Final, final

from wddmsim.core.errors import ConfigurationError

BUILD_PAGING_BUFFER: Final = "DxgkDdiBuildPagingBuffer"
START_DEVICE: Final = "WddmsimStartDevice"
KERNEL_SERVICES: Final = "WddmsimKernelServices"


@final
class NativeLibrary:
    """One loaded instance of a driver library: its exports by name."""

    __slots__ = ("_handle", "path")

    def __init__(self, path: Path, *, setting: str = "driver", entry: str = BUILD_PAGING_BUFFER) -> None:
        self.path = path
        if not path.is_file():
            raise ConfigurationError(setting, str(path), "must be a shared library (no such file)")
        fd, private = tempfile.mkstemp(prefix="wddmsim-driver-", suffix=path.suffix or ".so")
        try:
            os.close(fd)
            shutil.copyfile(path, private)
            try:
                self._handle: ctypes.CDLL | None = ctypes.CDLL(private, mode=os.RTLD_NOW | os.RTLD_LOCAL)
            except OSError as error:
                raise ConfigurationError(
                    setting, str(path), f"cannot be loaded as a shared library ({error})"
                ) from None
        finally:
            os.unlink(private)
        if self.function(entry) is None:  # an executor's library need not export DxgkDdiBuildPagingBuffer
            self.close()
            raise ConfigurationError(setting, str(path), f'must export {entry} (extern "C")')

    @property
    def handle(self) -> ctypes.CDLL:
        if self._handle is None:
            raise RuntimeError(f"{self.path}: the library was closed")
        return self._handle

    def function(self, name: str) -> object | None:
        """The export ``name`` as a ctypes function (cast it to its prototype), or None if absent."""
        try:
            found: object = getattr(self.handle, name)
        except AttributeError:
            return None
        return found

    def variable_address(self, name: str) -> int | None:
        """The address of the data export ``name`` (e.g. the kernel-services pointer), or None if absent."""
        try:
            return ctypes.addressof(ctypes.c_void_p.in_dll(self.handle, name))
        except ValueError:
            return None

    def close(self) -> None:
        """Forget the instance (its code stays mapped: a callback the driver kept must not jump into nothing)."""
        self._handle = None


__all__ = ["BUILD_PAGING_BUFFER", "KERNEL_SERVICES", "START_DEVICE", "NativeLibrary"]
