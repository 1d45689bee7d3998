"""Shared vocabulary: what every layer may use and none of them owns.

Units and alignment (``units``), addresses that carry their kind (``addresses``), bit layouts declared once
(``bits``), the deterministic simulated clock (``clock``), the append-only event log (``events``), CPU pointers
into simulated memory (``pointer``), the root of the error hierarchy (``errors``) and the reader of the TOML files
a user hands wddmsim (``tomlfile``).  Nothing here knows about GPUs or Windows; it is arithmetic and bookkeeping
only.
"""
