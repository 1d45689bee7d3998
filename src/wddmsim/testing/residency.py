"""What tests need around the residency manager: byte access to an allocation where VidMm says it is (through
the GPU's physical view), and the invariant checker of reliability-plan I1/I2 for segments and residency (I4, TLB
coherence, is :mod:`wddmsim.testing.tlb`).

The checker reads VidMm's records *and* the hardware: a range VidMm hands out must hold exactly its owner; an
aperture placement must have the aperture table pointing at the allocation's own backing pages; no system page
is the backing of two allocations; counts and budgets add up.
"""

from __future__ import annotations

import numpy as np

from wddmsim.core.pointer import ByteArray
from wddmsim.core.units import PAGE_SHIFT
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.hw.aperture import Aperture
from wddmsim.hw.faults import AccessKind
from wddmsim.hw.memsys import read_runs, write_runs
from wddmsim.system import Adapter
from wddmsim.vidmm.accounting import Figures
from wddmsim.vidmm.allocation import Content, VidMmAllocation
from wddmsim.vidmm.device import Process
from wddmsim.vidmm.paging.buffers import PagingBuffer
from wddmsim.vidmm.residency import GROUPS


def gpu_view(
    adapter: Adapter, a: VidMmAllocation, offset: int, size: int, *, write: ByteArray | None = None
) -> ByteArray:
    """Read (or write) bytes of ``a`` at its current placement, as the GPU sees them by physical address.

    An allocation that is not placed is not GPU-accessible: reading it is a test bug, so it raises.
    """
    if a.placement is None:
        raise AssertionError(f"{a!r} is not resident: the GPU cannot reach it")
    base = adapter.vidmm.spaces.get(a.placement.segment_id).base + a.placement.offset
    access = AccessKind.WRITE if write is not None else AccessKind.READ
    runs = adapter.gpu.memsys.runs(hw_address(Space.GPU_PHYS, base + offset), size, access, None)
    if write is not None:
        write_runs(runs, write)
        return write
    return read_runs(runs)


def backing_bytes(adapter: Adapter, a: VidMmAllocation) -> ByteArray:
    """The backing store's bytes (system memory, through the OS)."""
    assert a.backing is not None
    return np.frombuffer(adapter.mm.read(a.backing, 0, a.size), dtype=np.uint8)


def check_residency(adapter: Adapter, *, settled: bool = True) -> list[str]:
    """Every broken invariant of segments, placements, backing stores and counts, as prose.

    ``settled=False``: paging may be queued or in flight (a client that does not wait), so the hardware may still
    lag behind VidMm's records -- an aperture range VidMm handed out is mapped only when the paging buffer that maps
    it runs; those comparisons of records with the aperture's table are left out, every other check is made."""
    vidmm = adapter.vidmm
    manager = vidmm.residency
    problems: list[str] = []
    placed: dict[int, tuple[int, int]] = {}
    for space in vidmm.spaces:
        try:
            space.ranges.check()
        except AssertionError as error:
            problems.append(f"segment {space.id}: {error}")
        for offset, size, owner in space.held():
            if isinstance(owner, VidMmAllocation):
                if owner.placement is None or (owner.placement.segment_id, owner.placement.offset) != (
                    space.id,
                    offset,
                ):
                    problems.append(f"segment {space.id}+{offset:#x} is held by {owner!r}, which says otherwise")
                if size != owner.size:
                    problems.append(f"segment {space.id}+{offset:#x}: range {size:#x} for {owner.size:#x} bytes")
                if owner.handle in placed:
                    problems.append(f"{owner!r} holds two ranges")
                placed[owner.handle] = (space.id, offset)
                if not owner.usable_set >> (space.id - 1) & 1:
                    problems.append(f"{owner!r} is in segment {space.id}, outside its supported segment sets")
                if space.aperture and settled:
                    problems += _check_aperture(adapter.gpu.aperture, owner, offset)
            elif isinstance(owner, PagingBuffer):
                problems += _check_paging_buffer(adapter, space.id, owner, offset, size)
    commit = vidmm.spaces.aperture_commit
    if commit is not None:
        mapped = sum(s.size - s.ranges.free_bytes for s in vidmm.spaces if s.aperture)
        if commit.used != mapped or commit.used > commit.limit:
            problems.append(f"aperture commit {commit.used:#x} (limit {commit.limit:#x}) but {mapped:#x} mapped")
    frames: dict[int, int] = {}
    for a in manager.allocations.values():
        if a.placement is not None and a.handle not in placed:
            problems.append(f"{a!r} claims a placement no segment records")
        if a.residency_count < 0:
            problems.append(f"{a!r} has a negative residency count")
        if a.backing is None:
            if a.content != Content.DISCARDED or a.offered is None:
                problems.append(f"{a!r} lost its backing store without being offered and discarded")
            continue
        for pfn in a.backing.pfns.tolist():
            other = frames.setdefault(pfn, a.handle)
            if other != a.handle:
                problems.append(f"system page {pfn:#x} backs both {other:#x} and {int(a.handle):#x}")
    problems += check_locks(adapter)
    problems += check_accounts(adapter)
    for process in manager.processes.values():
        for group in GROUPS:
            if manager.budgets.usage(process, group) > manager.budgets.capacity(group):
                problems.append(f"process {int(process.handle):#x} uses more of {group.name} than exists")
    return problems


def recount(adapter: Adapter, process: Process, group: int) -> Figures:
    """A process's figures in ``group`` counted afresh from the live allocations (what its
    :class:`~wddmsim.vidmm.accounting.ProcessAccount` keeps incrementally)."""
    usage = committed = resident = aperture = 0
    vidmm = adapter.vidmm
    for a in vidmm.residency.allocations.values():
        if a.device.process is not process or a.group != group:
            continue
        committed += a.size
        usage += a.size if a.residency_count else 0
        if a.placement is not None:
            if vidmm.spaces.get(a.placement.segment_id).aperture:
                aperture += a.size
            else:
                resident += a.size
    demoted = aperture if group == GROUPS[0] else 0
    return Figures(usage, committed, resident, aperture, demoted)


def check_accounts(adapter: Adapter) -> list[str]:
    """Every process's incremental figures against a recount (decision 0175): a drifted counter is named."""
    problems: list[str] = []
    for process in adapter.vidmm.residency.processes.values():
        for group in GROUPS:
            kept, counted = process.account.figures(group), recount(adapter, process, group)
            if kept != counted:
                problems.append(
                    f"process {int(process.handle):#x} {group.name}: kept {kept} but the allocations add up to "
                    f"{counted}"
                )
    return problems


def _check_aperture(aperture: Aperture, a: VidMmAllocation, offset: int) -> list[str]:
    assert a.backing is not None
    pages = a.size >> PAGE_SHIFT
    first = offset >> PAGE_SHIFT
    mapped = aperture.pfns(offset, a.size, AccessKind.READ) if pages else np.zeros(0, dtype=np.uint64)
    if not np.array_equal(mapped, a.backing.pfns[:pages]):
        return [f"aperture pages {first:#x}+{pages} do not map {a!r}'s backing store"]
    return []


def _check_paging_buffer(adapter: Adapter, segment_id: int, buffer: PagingBuffer, offset: int, size: int) -> list[str]:
    """A paging buffer's range (``PagingBufferSegmentId``): in that aperture segment, the size of the buffer's
    pages, mapped onto them, and the address the buffer is submitted at."""
    home = adapter.vidmm.paging_home
    if home is None or home.space.id != segment_id:
        return [f"segment {segment_id}+{offset:#x} holds a paging buffer, but PagingBufferSegmentId names no such"]
    pages = -(-buffer.size >> PAGE_SHIFT)
    if size != pages << PAGE_SHIFT:
        return [f"segment {segment_id}+{offset:#x}: a {size:#x}-byte range for a {buffer.size:#x}-byte paging buffer"]
    if not np.array_equal(adapter.gpu.aperture.pfns(offset, size, AccessKind.READ), buffer.mdl.pfns[:pages]):
        return [f"aperture pages {offset >> PAGE_SHIFT:#x}+{pages} do not map the paging buffer held there"]
    if (buffer.segment_id, buffer.segment_address) != (segment_id, home.space.base + offset):
        return [f"the paging buffer at segment {segment_id}+{offset:#x} is submitted at {buffer.segment_address:#x}"]
    return []


def check_locks(adapter: Adapter) -> list[str]:
    """CPU views and swizzling ranges: a locked allocation's view shows it where it is (the BAR at its segment
    offset while it is in a CPU-visible memory segment, its backing pages otherwise, never a memory segment
    behind a page view); the arbiter's ranges, the allocations' and the driver's detiling registers agree."""
    vidmm = adapter.vidmm
    problems: list[str] = []
    for a in vidmm.residency.allocations.values():
        lock = a.lock
        if lock is None:
            continue
        if a.cpu_view is None:
            problems.append(f"{a!r} is locked without a view")
            continue
        views = {base: what for base, _, what in a.device.process.cpu.views()}
        shown = views.get(a.cpu_view)
        space = None if a.placement is None else vidmm.spaces.get(a.placement.segment_id)
        if lock.on_bus:
            if space is None or space.aperture or not space.cpu_visible or shown != "bus":
                problems.append(f"{a!r}'s view shows the BAR but it is not in a CPU-visible memory segment")
        else:
            if shown != "pages":
                problems.append(f"{a!r}'s lock says system pages but its view shows {shown}")
            if space is not None and not space.aperture:
                problems.append(f"{a!r} is locked through its system pages yet placed in memory segment {space.id}")
    for slot, held in enumerate(vidmm.locks.ranges):
        if held is None:
            continue
        if held.allocation.ranges.get(held.private_data) != slot:
            problems.append(f"swizzling range {slot} is held for {held.allocation!r}, which does not know it")
    for a in vidmm.residency.allocations.values():
        for private, slot in a.ranges.items():
            held = vidmm.locks.ranges[slot]
            if held is None or held.allocation is not a or held.private_data != private:
                problems.append(f"{a!r} believes it holds swizzling range {slot}")
            if a.placement is None:
                problems.append(f"{a!r} holds swizzling range {slot} while not in a segment")
    return problems
