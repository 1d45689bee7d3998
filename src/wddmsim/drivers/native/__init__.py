"""The bridge to a driver built as a native shared library (issue 21).

What this layer models: a Windows display driver's ``DxgkDdiBuildPagingBuffer`` (and, optionally, its own
paging-buffer executor) compiled on Linux against the header shipped here, ``wddmsim/ddk.h``, and loaded into the
simulator.  This package holds the ABI both sides agree on: the header (:func:`include_dir`), its ctypes mirror
(:mod:`~wddmsim.drivers.native.abi`: every structure with the x64 Windows layout, and the table of sizes and
offsets the layout test compares with the C compiler's), and the Python views of the enumerations, which are
:mod:`wddmsim.ddi`'s own.  A driver is built with ``cc -shared -fPIC -I$(wddmsim include-dir) ...``.
"""

from wddmsim.drivers.native.include import header_path, include_dir

__all__ = ["header_path", "include_dir"]
