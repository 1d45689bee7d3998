"""The video memory manager (VidMm) and the small GPU scheduler that submits its buffers.

What it models so far: the caller's side of ``DxgkDdiBuildPagingBuffer`` -- paging buffers acquired fresh and
4 KiB aligned, operations packed into them in order, the normative multipass loop (``MultipassOffset`` zeroed
before the first call and never touched between calls, each partial buffer submitted on its own), the
``ALLOCATION_BUSY`` / ``AllocationIsIdle`` retry, and a checker that holds the driver to the contract (legal
statuses only, ``pDmaBuffer``/``DmaSize`` consistent, nothing written past ``DmaSize``).  Any breach goes to
the adapter-reset path (design D6), never to a Python crash.  The scheduler submits through
``DxgkDdiSubmitCommand`` and learns of completions and faults from ``DxgkCbNotifyInterrupt``.

VidMm reaches the GPU only through ``wddmsim.ddi``: it never imports the driver or the hardware.
"""
