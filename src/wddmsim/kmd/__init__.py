"""The reference kernel-mode driver for the simulated GPU.

What it models: the ``DxgkDdi*`` entry points the paging path needs -- segment and capability queries,
``DxgkDdiCreateAllocation``, ``DxgkDdiBuildPagingBuffer`` for operations 0-17 (one module per family under
``paging/``), ``DxgkDdiSubmitCommand``, swizzling ranges, reset -- and the interrupt routine that reports
completions and faults through ``DxgkCbNotifyInterrupt``.  It is the only place where DDI structures meet
hardware bits: DDI in, packets (``hw.commands``) and MMIO out.

Invariants: ``build_paging_buffer`` never writes past ``DmaSize``; it checks for room *before* writing and
returns ``STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER`` with its progress in ``MultipassOffset``; it returns only
the three legal statuses; a request that breaks the DDI contract raises :class:`~.errors.DriverContractError`.
"""
