"""wddmsim: the WDDM video-memory paging path, executable.

A video memory manager (``vidmm``) places allocations in GPU memory segments and asks a kernel-mode driver
(``kmd``) to encode every move as a paging buffer (``DxgkDdiBuildPagingBuffer``); a simulated GPU (``hw``)
executes those bytes.  The layers are the sub-packages, in dependency order::

    cli / viz / bench     views and the command line (read only)
    system                the composition root: builds an adapter from a configuration and a driver package
    drivers               driver packages: the interface, the registry, the reference driver as one package
    api                   the user-mode surface (pfnAllocateCb, pfnLockCb, ...)
    vidmm                 the video memory manager and the GPU scheduler that submits its buffers
    ddi                   the kernel-mode DDI contract (d3dkmddi.h in Python)
    kmd, ntos             the reference driver and the OS services it and VidMm are given
    hw                    the simulated GPU and platform (knows nothing of Windows)
    core                  units, typed addresses, bit layouts, the clock and the event log
"""

__version__ = "0.1.0"
