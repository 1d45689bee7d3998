"""The GPU's memory system: what a packet's address names, and moving bytes between those places.

A packet address (:mod:`.addressing`) resolves to *runs* -- ``(memory, offset, length)`` triples, in order --
through the local range, the aperture table, system RAM, or the MMU.  Copies, fills and word accesses then work
on runs, coalesced so that physically contiguous memory moves in one call.  Copies have memmove semantics.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import assert_never, final

import numpy as np
import numpy.typing as npt

from wddmsim.core.pointer import ByteArray
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE
from wddmsim.hw import swizzle
from wddmsim.hw.addressing import HW_ADDRESS, Space
from wddmsim.hw.aperture import Aperture
from wddmsim.hw.commands import PAGE_EXTENT, Transform
from wddmsim.hw.faults import AccessKind, FaultKind, GpuFault
from wddmsim.hw.memory import LocalMemory, PhysicalMemory, SystemMemory
from wddmsim.hw.mmu import Mmu, Run
from wddmsim.hw.pte import TablePointer

_PFN_MASK = np.uint64(PAGE_EXTENT["Pfn"].mask)
_PFN_BITS = PAGE_EXTENT["Pfn"].mask
_COUNT_BITS_SHIFT = PAGE_EXTENT["CountMinus1"].lsb
_COUNT_SHIFT = np.uint64(PAGE_EXTENT["CountMinus1"].lsb)
# Enum members read once: attribute access on an enum class is slow on the hot path.
_GPU_PHYS = Space.GPU_PHYS
_SYSTEM = Space.SYSTEM
_GPU_VA = Space.GPU_VA
_SPACE_LSB = HW_ADDRESS["space"].lsb
_ADDRESS_MASK = HW_ADDRESS["address"].mask


def pfn_runs(system: SystemMemory, pfns: npt.NDArray[np.uint64], first_offset: int, size: int) -> list[Run]:
    """Runs through consecutive system pages ``pfns``, starting ``first_offset`` bytes into the first."""
    p = pfns.astype(np.int64, copy=False)
    breaks = np.flatnonzero(np.diff(p) != 1) + 1
    starts = np.concatenate(([0], breaks)).tolist()
    stops = [*starts[1:], int(p.shape[0])]
    runs: list[Run] = []
    remaining = size
    for start, stop in zip(starts, stops, strict=True):
        skip = first_offset if start == 0 else 0
        length = min((stop - start) * PAGE_SIZE - skip, remaining)
        if length <= 0:
            break
        runs.append((system, (int(p[start]) << PAGE_SHIFT) + skip, length))
        remaining -= length
    return runs


@final
class MemorySystem:
    """Resolves packet addresses for one GPU."""

    __slots__ = ("aperture", "local", "mmu", "system")

    def __init__(self, local: LocalMemory, system: SystemMemory, aperture: Aperture, mmu: Mmu) -> None:
        self.local = local
        self.system = system
        self.aperture = aperture
        self.mmu = mmu

    def runs(
        self, word: int, size: int, access: AccessKind, root: TablePointer | None, root_entries: int | None = None
    ) -> list[Run]:
        if size == 0:
            return []
        space, address = word >> _SPACE_LSB, word & _ADDRESS_MASK
        if space == _GPU_VA:  # the usual case first: an engine's work runs in an address space
            if root is None:
                raise GpuFault(FaultKind.PAGE_FAULT, address, "the engine has no address space", access=access, level=0)
            return self.mmu.translate(root, address, size, access, root_entries=root_entries)
        if space == _GPU_PHYS:
            local = self.local
            if size > 0 and address + size <= local.size:  # local.contains, inline: the address is never negative
                return [(local, address, size)]
            if self.aperture.contains(address):
                offset = address - self.aperture.base
                pfns = self.aperture.pfns(offset, size, access)
                return pfn_runs(self.system, pfns, offset & (PAGE_SIZE - 1), size)
            raise GpuFault(FaultKind.BUS_ERROR, address, "GPU physical address maps no memory", access=access)
        if space == _SYSTEM:
            system = self.system
            if size > 0 and address + size <= system.size:  # system.contains, inline
                return [(system, address, size)]
            raise GpuFault(FaultKind.BUS_ERROR, address, "system address is outside RAM", access=access)
        raise GpuFault(FaultKind.INVALID_INSTRUCTION, word, f"address space {space} is undefined", access=access)

    def page_list_runs(self, first_offset: int, extents: npt.NDArray[np.uint64], size: int) -> list[Run]:
        """Runs through a COPY page list: ``size`` bytes from ``first_offset`` into its first page."""
        starts, lengths = self.page_list_spans(first_offset, extents, size)
        system = self.system
        return [(system, s, n) for s, n in zip(starts, lengths, strict=True)]

    def _few_spans(self, first_offset: int, words: Sequence[int], size: int) -> tuple[list[int], list[int]]:
        return _few_spans_impl(self.system, first_offset, words, size)

    def copy_page_list(
        self,
        linear_word: int,
        first_offset: int,
        words: tuple[int, ...],
        size: int,
        to_pages: bool,
        root: TablePointer | None,
        root_entries: int | None,
    ) -> bool:
        """A small paged COPY (:func:`~.commands.paged_copy_at`'s fields) in one call: the page list's spans,
        the linear side's runs, then the copy -- the order :meth:`page_list_spans`, :meth:`runs` and
        :func:`scatter_gather` check and fault in.  ``False`` (nothing copied) where ``scatter_gather`` would
        decline.  One extent (a 4 KiB transfer's page) and a linear side in local memory are worked out inline."""
        system = self.system
        starts: list[int] | None = None
        if len(words) == 1:  # one extent: one span, no lists
            word = words[0]
            start = ((word & _PFN_BITS) << PAGE_SHIFT) + first_offset
            length = (((word >> _COUNT_BITS_SHIFT) + 1) << PAGE_SHIFT) - first_offset
            if length > size:
                length = size
            if start + length > system.size:
                raise GpuFault(FaultKind.BUS_ERROR, start, "page-list page is outside RAM")
        else:
            starts, lengths = _few_spans_impl(system, first_offset, words, size)
        address = linear_word & _ADDRESS_MASK
        if linear_word >> _SPACE_LSB == _GPU_PHYS and address + size <= self.local.size:  # runs()' answer, inline
            view = self.local.view
        else:
            found = self._linear_view(linear_word, size, to_pages, root, root_entries)
            if found is None:
                return False
            view, address = found
        ram = system.view
        if starts is None:
            if to_pages:
                ram[start : start + length] = view[address : address + length]
            else:
                view[address : address + length] = ram[start : start + length]
        else:
            _copy_spans(view, address, ram, starts, lengths, to_pages=to_pages)
        return True

    def _linear_view(
        self, word: int, size: int, to_pages: bool, root: TablePointer | None, root_entries: int | None
    ) -> tuple[memoryview, int] | None:
        """The memory and offset of a linear side that is one run outside system RAM (else ``None``)."""
        runs = self.runs(word, size, AccessKind.READ if to_pages else AccessKind.WRITE, root, root_entries)
        if len(runs) != 1:
            return None
        mem, offset, _ = runs[0]
        if mem is None or mem is self.system:
            return None
        return mem.view, offset

    def page_list_spans(
        self, first_offset: int, extents: npt.NDArray[np.uint64], size: int
    ) -> tuple[list[int], list[int]]:
        """System-RAM ``(starts, lengths)`` of a COPY page list, adjacent extents merged."""
        if size <= 0:
            return [], []
        if extents.shape[0] <= 8:  # a handful of extents: plain Python beats numpy's per-call overhead
            return self._few_spans(first_offset, extents.tolist(), size)
        pfns = (extents & _PFN_MASK).astype(np.int64)
        lengths = ((extents >> _COUNT_SHIFT).astype(np.int64) + 1) << PAGE_SHIFT
        starts = pfns << PAGE_SHIFT
        starts[0] += first_offset
        lengths[0] -= first_offset
        ends = np.cumsum(lengths)
        last = int(np.searchsorted(ends, size))  # the extent holding the last byte
        starts, lengths = starts[: last + 1], lengths[: last + 1]
        lengths[-1] -= int(ends[last]) - size
        if int((starts + lengths).max()) > self.system.size:
            raise GpuFault(FaultKind.BUS_ERROR, int(starts.max()), "page-list page is outside RAM")
        if starts.shape[0] > 1:  # merge extents that happen to be adjacent
            joined = np.flatnonzero(starts[:-1] + lengths[:-1] != starts[1:]) + 1
            if joined.shape[0] + 1 < starts.shape[0]:
                bounds = np.concatenate(([0], joined))
                lengths = np.add.reduceat(lengths, bounds)
                starts = starts[bounds]
        return starts.tolist(), lengths.tolist()


def _few_spans_impl(
    system: SystemMemory, first_offset: int, words: Sequence[int], size: int
) -> tuple[list[int], list[int]]:
    starts: list[int] = []
    lengths: list[int] = []
    skip, remaining = first_offset, size
    for word in words:
        pfn, pages = word & _PFN_BITS, (word >> _COUNT_BITS_SHIFT) + 1
        start = (pfn << PAGE_SHIFT) + skip
        length = min((pages << PAGE_SHIFT) - skip, remaining)
        skip = 0
        if starts and starts[-1] + lengths[-1] == start:
            lengths[-1] += length
        else:
            starts.append(start)
            lengths.append(length)
        remaining -= length
        if remaining <= 0:
            break
    if starts[-1] + lengths[-1] > system.size:
        raise GpuFault(FaultKind.BUS_ERROR, starts[-1], "page-list page is outside RAM")
    for start, length in zip(starts, lengths, strict=True):
        if start + length > system.size:
            raise GpuFault(FaultKind.BUS_ERROR, start, "page-list page is outside RAM")
    return starts, lengths


def _copy_spans(
    view: memoryview, offset: int, ram: memoryview, starts: list[int], lengths: list[int], *, to_pages: bool
) -> None:
    if to_pages:
        for start, length in zip(starts, lengths, strict=True):
            ram[start : start + length] = view[offset : offset + length]
            offset += length
    else:
        for start, length in zip(starts, lengths, strict=True):
            view[offset : offset + length] = ram[start : start + length]
            offset += length


def scatter_gather(linear: Run, system: SystemMemory, starts: list[int], lengths: list[int], *, to_pages: bool) -> bool:
    """The hot path of a paged COPY: one linear run against a page list, in distinct memories.

    Returns ``False`` (nothing copied) when the fast path does not apply.
    """
    mem, offset, _ = linear
    if mem is None or mem is system:
        return False
    _copy_spans(mem.view, offset, system.view, starts, lengths, to_pages=to_pages)
    return True


def copy_runs(src: list[Run], dst: list[Run]) -> None:
    """Copy the bytes of ``src`` runs into ``dst`` runs (equal total lengths)."""
    if len(src) == 1 and src[0][0] is not None:
        _scatter(src[0], dst)
        return
    if len(dst) == 1 and dst[0][0] is not None:
        _gather(src, dst[0])
        return
    si = di = 0
    s_mem, s_off, s_len = src[0]
    d_mem, d_off, d_len = dst[0]
    while True:
        n = min(s_len, d_len)
        _copy(s_mem, s_off, d_mem, d_off, n)
        s_off += n
        s_len -= n
        d_off += n
        d_len -= n
        if s_len == 0:
            si += 1
            if si == len(src):
                return
            s_mem, s_off, s_len = src[si]
        if d_len == 0:
            di += 1
            d_mem, d_off, d_len = dst[di]


def _copy(s_mem: PhysicalMemory | None, s_off: int, d_mem: PhysicalMemory | None, d_off: int, n: int) -> None:
    if d_mem is None:
        return  # a write to a Zero page is dropped
    if s_mem is None:
        d_mem.data[d_off : d_off + n] = 0
    elif s_mem is d_mem and s_off < d_off + n and d_off < s_off + n:
        np.copyto(d_mem.data[d_off : d_off + n], s_mem.data[s_off : s_off + n])  # overlapping: memmove
    else:
        d_mem.view[d_off : d_off + n] = s_mem.view[s_off : s_off + n]


def _scatter(src: Run, dst: list[Run]) -> None:
    s_mem, s_off, _ = src
    assert s_mem is not None
    view = s_mem.view
    for d_mem, d_off, n in dst:
        if d_mem is None:
            pass
        elif d_mem is s_mem and s_off < d_off + n and d_off < s_off + n:
            _copy(s_mem, s_off, d_mem, d_off, n)
        else:
            d_mem.view[d_off : d_off + n] = view[s_off : s_off + n]
        s_off += n


def _gather(src: list[Run], dst: Run) -> None:
    d_mem, d_off, _ = dst
    assert d_mem is not None
    view = d_mem.view
    for s_mem, s_off, n in src:
        if s_mem is None:
            d_mem.data[d_off : d_off + n] = 0
        elif s_mem is d_mem and s_off < d_off + n and d_off < s_off + n:
            _copy(s_mem, s_off, d_mem, d_off, n)
        else:
            view[d_off : d_off + n] = s_mem.view[s_off : s_off + n]
        d_off += n


def read_runs(runs: list[Run]) -> ByteArray:
    """The bytes of ``runs`` as one new array."""
    total = sum(r[2] for r in runs)
    out: ByteArray = np.empty(total, dtype=np.uint8)
    pos = 0
    for mem, off, n in runs:
        if mem is None:
            out[pos : pos + n] = 0
        else:
            out[pos : pos + n] = mem.data[off : off + n]
        pos += n
    return out


def write_runs(runs: list[Run], payload: ByteArray | memoryview | bytes) -> None:
    """Write the bytes of ``payload`` through ``runs`` (a Zero page drops its part)."""
    pos = 0
    for mem, off, n in runs:
        if mem is not None:
            # A memoryview copy: the cheapest for the page-sized writes of WRITE_QWORDS.
            mem.view[off : off + n] = payload[pos : pos + n]  # type: ignore[assignment]  # ndarray is a buffer
        pos += n


def transform_copy(src: list[Run], dst: list[Run], transform: Transform, pitch: int) -> None:
    """Copy while converting between the linear and tiled layouts (:mod:`.swizzle`)."""
    data = read_runs(src)
    match transform:
        case Transform.TILE:
            converted = swizzle.tile(data, pitch)
        case Transform.UNTILE:
            converted = swizzle.untile(data, pitch)
        case Transform.NONE:
            converted = data
        case _:
            assert_never(transform)
    write_runs(dst, converted)


def fill_runs(runs: list[Run], pattern: int) -> None:
    """Fill with the 32-bit pattern, phase counted from the first byte of the first run."""
    phase = 0
    for mem, off, n in runs:
        if mem is not None:
            if phase % 4 == 0:
                mem.fill(off, n, pattern)
            else:
                rotated = ((pattern >> (8 * (phase % 4))) | (pattern << (32 - 8 * (phase % 4)))) & 0xFFFFFFFF
                mem.fill(off, n, rotated)
        phase += n
