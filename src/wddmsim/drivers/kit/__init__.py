"""The driver kit of the simulated GPU: what any kernel-mode driver for it needs, whoever writes it.

A driver for this GPU, whatever its policy, writes the GPU's packets into the DMA buffers VidMm hands it
(``DxgkDdiBuildPagingBuffer``), turns the GPU's interrupts into ``DxgkCbNotifyInterrupt`` data
(``DxgkDdiInterruptRoutine``), resets an engine, keeps its own local memory across power states and, in the WDDM
1.x model, checks a user-mode command buffer's patch locations and writes its physical addresses
(``DxgkDdiRender``, ``DxgkDdiPatch``).  Those mechanics live here once, after a
GPU vendor's shared driver library; each driver package keeps its own policy (which operations it builds, which
packets user mode may send, what it does with an interrupt before ``DxgkDdiStartDevice``, what it forgets when
the GPU goes down).

- :mod:`~wddmsim.drivers.kit.dma`: the cursor over ``[pDmaBuffer, pDmaBuffer + DmaSize)`` with room checks,
  and the multipass loop.
- :mod:`~wddmsim.drivers.kit.interrupts`: a hardware interrupt as ``DXGKARGCB_NOTIFY_INTERRUPT_DATA``.
- :mod:`~wddmsim.drivers.kit.render`: ``DxgkDdiRender``'s copy-and-check loop and ``DxgkDdiPatch``.
- :mod:`~wddmsim.drivers.kit.engines`: ``DxgkDdiResetEngine`` (one engine a node).
- :mod:`~wddmsim.drivers.kit.power`: ``DxgkDdiSetPowerState``'s checks, and the driver's hidden memory (the
  aperture table) saved across a power-down that loses it.

The kit imports the DDI and the hardware, never a concrete driver (decision 0095).
"""
