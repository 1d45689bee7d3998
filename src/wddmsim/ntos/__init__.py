"""The OS kernel services the display stack relies on, over the simulated platform.

What it models: the memory manager's page-frame allocator (``MmAllocatePagesForMdl``, contiguous allocations),
MDLs over those frames, kernel virtual mappings the CPU reads and writes through, and processes' user-mode views
that VidMm points at the BAR or at system pages for locks (and rotates when the allocation moves).  Pages handed out are
zeroed first, so no byte of a previous owner ever shows through.  What it does not model: paging system memory
to disk, NUMA, large pages, an IOMMU.

VidMm and the driver receive it as a ``ddi.driver.SystemMemoryServices``; neither imports this package.
"""
