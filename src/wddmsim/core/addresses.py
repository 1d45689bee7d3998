"""Addresses and ids that carry their kind in their type.

They are ``NewType`` wrappers around ``int``: free at run time, but mypy refuses a GPU virtual address where a
segment offset is expected -- the class of bug UVM guards against with ``uvm_gpu_address_t.is_virtual``.
"""

from __future__ import annotations

from typing import NewType

GpuVa = NewType("GpuVa", int)
"""A GPU virtual address (``D3DGPU_VIRTUAL_ADDRESS``), translated by the GPU MMU of one address space."""

GpuPhysAddr = NewType("GpuPhysAddr", int)
"""A GPU physical address: local video memory or an aperture range, as the GPU's memory controller sees it.
A segment location's ``SegmentAddress`` is one (``SegmentOffset + Segment.BaseAddress``)."""

SegmentOffset = NewType("SegmentOffset", int)
"""A byte offset from the start of a segment."""

BusAddress = NewType("BusAddress", int)
"""A CPU physical / PCI bus address: system RAM, or a BAR window onto local memory."""

Pfn = NewType("Pfn", int)
"""A system-memory page frame number (``BusAddress >> 12`` for RAM)."""

CpuVa = NewType("CpuVa", int)
"""A CPU virtual address in the simulated kernel address space."""

SegmentId = NewType("SegmentId", int)
"""A segment id: 1-based index into the driver's segment descriptors; 0 is system memory (decision D4)."""

FenceValue = NewType("FenceValue", int)
"""A 64-bit fence value; 0 means 'already complete' where the DDI says so."""
