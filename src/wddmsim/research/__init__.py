"""Research mode: the paging problem a run poses, and how far a policy is from what any policy must page in.

A layer beside the views (decision 0144): it reads VidMm's public results (the event log, the segments) and its
policy interface, and is never imported by VidMm, the runtime, the driver or the hardware.

* :mod:`~wddmsim.research.reference`: the reference string of a run (uses per request, with sizes, and the
  capacity), from a recorded trace or a live run.
* :mod:`~wddmsim.research.bound`: a certified lower bound on bytes paged in, valid for every policy (the interval
  LP relaxation of Berger, Beckmann and Harchol-Balter, 2018), exact on equal sizes.
* :mod:`~wddmsim.research.cache`: a tiny demand-paging model of LRU, FIFO, random and Belady's MIN.
* :mod:`~wddmsim.research.runs`: reference strings of real runs and the run metrics ``paged_in_over_compulsory``
  and ``paged_in_over_lower_bound``.
"""

from wddmsim.research.bound import LowerBound, lower_bound
from wddmsim.research.reference import ReferenceRecorder, ReferenceString, Use

__all__ = ["LowerBound", "ReferenceRecorder", "ReferenceString", "Use", "lower_bound"]
