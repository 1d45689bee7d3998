"""The residency core, split by what each part models (decision 0060); :class:`ResidencyManager` is its façade.

Modules, bottom-up (none imports one above it): :mod:`.checks`, :mod:`.placement`, :mod:`.fences`,
:mod:`.servicing`, :mod:`.waits`, :mod:`.budgets`, :mod:`.requests`, :mod:`.offers`, :mod:`.contexts`,
:mod:`.lifetimes`, :mod:`.outages`, :mod:`.facade`.
"""

from wddmsim.vidmm.residency.budgets import GROUPS
from wddmsim.vidmm.residency.facade import ResidencyManager
from wddmsim.vidmm.residency.lifetimes import Residence

__all__ = ["GROUPS", "Residence", "ResidencyManager"]
