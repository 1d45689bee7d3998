"""The user-mode surface: what a user-mode display driver calls (the ``pfn*Cb`` runtime callbacks) and the
``D3DKMT*`` thunks, over one adapter's VidMm.

What it models: processes, each with its own handle space (a handle another process created, or a handle of the
wrong kind, is ``E_INVALIDARG`` here, before VidMm sees it) and its own CPU address space; devices and their
callbacks -- allocations, paging queues, residency, GPU virtual addresses, contexts and submissions, CPU locks,
offer and reclaim, budgets.  Every call takes the ``D3DDDICB_*`` / ``D3DDDI_*`` structure of its callback, writes
its ``[out]`` fields, and returns the ``HRESULT``; a refused call raises :class:`~wddmsim.ddi.status.DdiError`
naming the argument, its value and the rule, and changes nothing.
"""

from wddmsim.api.runtime import Runtime, UserDevice, UserProcess

__all__ = ["Runtime", "UserDevice", "UserProcess"]
