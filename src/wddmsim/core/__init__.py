"""Shared vocabulary: what every layer may use and none of them owns.

Units and alignment (``units``), addresses that carry their kind (``addresses``), bit layouts declared once
(``bits``), the deterministic simulated clock (``clock``), the append-only event log (``events``), CPU pointers
into simulated memory (``pointer``) and the root of the error hierarchy (``errors``).  Nothing here knows about
GPUs or Windows; it is arithmetic and bookkeeping only.
"""
