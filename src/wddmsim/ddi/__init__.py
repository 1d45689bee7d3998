"""The WDDM kernel-mode DDI contract (``d3dkmddi.h``, ``d3dukmdt.h``), in Python.

What it holds: the enums, flag unions and structures with Microsoft's names and numeric values
(``DXGK_BUILDPAGINGBUFFER_OPERATION``, ``DXGKARG_BUILDPAGINGBUFFER``, ``DXGK_PTE``, segment descriptors ...), the
status codes, the ``KernelModeDriver`` protocol VidMm calls, the callbacks the driver may call back
(``DxgkCb*``), the OS memory services both are given, and the contract checks a conforming caller obeys.

Neither side owns it: VidMm depends on this package and never on the driver; the driver implements it.
Names are kept exactly as documented so a driver developer can grep for them; each definition cites its source
(see ``../shared/reference/wddm-spec.md``).  Operations 18-25 are named but not modelled (decision D2).
"""
