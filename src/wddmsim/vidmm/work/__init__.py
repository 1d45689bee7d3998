"""The processes' GPU work: DMA buffers submitted on contexts through their VA spaces (submit), ``pfnRenderCb`` in
the segment model (render), and the ``DXGKRNL_INTERFACE`` callbacks the driver is given (callbacks).
"""
