"""The simulated GPU and platform -- silicon and data sheet, nothing of Windows.

What it models: local video memory and host RAM as sparse byte arrays (4 KiB page frames for RAM); a PCI BAR
onto local memory with detiling windows; an aperture whose page table (GART) lives in local memory; an MMU that
walks multi-level page tables in memory and caches translations in a TLB; engines whose command processors
decode and execute a documented packet format (``docs/command-format.md``), or hand a submission to a pluggable
executor with a table of GPU services (:mod:`.services`); a cost model that paces them on the simulated clock;
interrupts for completion, signals and faults.  System RAM is a memory file whose frames can be mapped again,
contiguously, for native code (:mod:`.hostmap`).

What it does not model: caches other than the TLB, power states, display, clocks other than the simulated one.
Invariants: packets take effect only when they complete on the clock; an engine that faults runs nothing more
until reset; no packet can reach memory outside the address it names (a bad address is a fault, never a crash).
"""
