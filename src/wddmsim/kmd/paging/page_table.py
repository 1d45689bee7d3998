"""GpuMmu page-table operations: ``UPDATE_PAGE_TABLE`` (11), ``FLUSH_TLB`` (12), ``COPY_PAGE_TABLE_ENTRIES`` (14).

UpdatePageTable translates ``DXGK_PTE`` entries into hardware words and writes them by the mode VidMm gives:
``CPU_VIRTUAL`` -- immediately, with the CPU, through ``PageTableAddress.CpuVirtual`` (the only mode allowed with
``pDmaBuffer`` NULL, when the paging process's own tables are initialised); ``GPU_VIRTUAL`` / ``GPU_PHYSICAL`` --
WRITE_QWORDS packets at the table's paging-process VA / segment address.  ``MultipassOffset`` counts entries
written; each pass re-reads its source entries from ``pPageTableEntries[MultipassOffset:]``, never from 0.
"""

from __future__ import annotations

import numpy as np

from wddmsim.core.units import SIZE_64K
from wddmsim.ddi.base import D3DGPU_PHYSICAL_ADDRESS
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE
from wddmsim.ddi.paging import DXGKARG_BUILDPAGINGBUFFER
from wddmsim.ddi.status import NTSTATUS
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.hw.pte import PTE_SIZE
from wddmsim.kmd.dma import DmaWriter, multipass, single_packet
from wddmsim.kmd.errors import DriverContractError
from wddmsim.kmd.pte_format import translate
from wddmsim.kmd.state import DriverState

Mode = DXGK_PAGETABLEUPDATEMODE


def table_word(state: DriverState, address: D3DGPU_PHYSICAL_ADDRESS, argument: str) -> int:
    """Packet address of a table given as (SegmentId, SegmentOffset); segment 0 is system memory."""
    if address.SegmentId == 0:
        if not state.gpu.system.contains(address.SegmentOffset, PTE_SIZE):
            raise DriverContractError(f"{argument}.SegmentOffset", address.SegmentOffset, "is outside system memory")
        return hw_address(Space.SYSTEM, address.SegmentOffset)
    segment = state.segments.memory_segment(address.SegmentId, f"{argument}.SegmentId")
    return state.segments.address(address.SegmentId, segment.base + address.SegmentOffset, PTE_SIZE, argument)


def build_update_page_table(state: DriverState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DxgkDdiBuildPagingBuffer`` for ``DXGK_OPERATION_UPDATE_PAGE_TABLE``."""
    p = args.UpdatePageTable
    layout = state.gpu.mmu.layout
    if not state.wddm2:
        raise DriverContractError("Operation", int(p.OPERATION), "UpdatePageTable is a GpuMmu (WDDM 2.x) operation")
    if p.Reserved0:
        raise DriverContractError("UpdatePageTable.Reserved0", p.Reserved0, "must be zero")
    if not 0 <= p.PageTableLevel < layout.levels:
        raise DriverContractError(
            "UpdatePageTable.PageTableLevel", p.PageTableLevel, f"levels are 0..{layout.levels - 1}"
        )
    entries_in_table = layout.entries(p.PageTableLevel)
    if p.NumPageTableEntries < 0 or p.StartIndex < 0 or p.StartIndex + p.NumPageTableEntries > entries_in_table:
        raise DriverContractError(
            "UpdatePageTable.StartIndex",
            p.StartIndex,
            f"{p.NumPageTableEntries} entries from it leave the {entries_in_table}-entry table",
        )
    source_count = 1 if p.Flags.Repeat else p.NumPageTableEntries
    if p.pPageTableEntries.shape[0] < source_count:
        raise DriverContractError(
            "UpdatePageTable.pPageTableEntries", p.pPageTableEntries.shape[0], f"needs {source_count} entries"
        )
    protection = p.DriverProtection if p.PageTableLevel == 0 else 0
    if p.UpdateMode == Mode.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL:
        return _update_by_cpu(state, args, protection)
    if args.pDmaBuffer is None:
        raise DriverContractError("pDmaBuffer", None, "NULL only with the forced CPU_VIRTUAL update mode")
    if p.UpdateMode == Mode.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL:
        base = hw_address(Space.GPU_VA, p.PageTableAddress.GpuVirtual)
    else:
        base = table_word(state, p.PageTableAddress.GpuPhysical, "UpdatePageTable.PageTableAddress.GpuPhysical")
    writer = DmaWriter(args)
    first = p.StartIndex * PTE_SIZE
    if p.Flags.Repeat:
        word = translate(p.pPageTableEntries[:1], state.segments, level=p.PageTableLevel, driver_protection=protection)

        def emit_repeat(done: int) -> int:
            if writer.room < cmd.write_qwords_length(1):
                return 0
            n = p.NumPageTableEntries - done
            writer.pos += cmd.encode_write_qwords_into(
                writer.buf, writer.pos, base + first + PTE_SIZE * done, n, word, repeat=True
            )
            return n

        return multipass(args, writer, p.NumPageTableEntries, emit_repeat)

    def emit(done: int) -> int:
        room = cmd.max_qwords_in(writer.room)
        if room < 1:
            return 0
        n = min(p.NumPageTableEntries - done, room)
        words = translate(
            p.pPageTableEntries[done : done + n], state.segments, level=p.PageTableLevel, driver_protection=protection
        )
        writer.pos += cmd.encode_write_qwords_into(writer.buf, writer.pos, base + first + PTE_SIZE * done, n, words)
        return n

    return multipass(args, writer, p.NumPageTableEntries, emit)


def _update_by_cpu(state: DriverState, args: DXGKARG_BUILDPAGINGBUFFER, protection: int) -> NTSTATUS:
    p = args.UpdatePageTable
    pointer = p.PageTableAddress.CpuVirtual
    if pointer is None:
        raise DriverContractError(
            "UpdatePageTable.PageTableAddress.CpuVirtual", None, "CPU_VIRTUAL updates need the table's CPU VA"
        )
    source = p.pPageTableEntries[:1] if p.Flags.Repeat else p.pPageTableEntries[: p.NumPageTableEntries]
    words = translate(source, state.segments, level=p.PageTableLevel, driver_protection=protection)
    if p.Flags.Repeat:
        words = np.repeat(words, p.NumPageTableEntries)
    target = (pointer + p.StartIndex * PTE_SIZE).bytes(PTE_SIZE * p.NumPageTableEntries)
    target[:] = words.astype("<u8").tobytes()
    args.MultipassOffset = p.NumPageTableEntries
    return NTSTATUS.STATUS_SUCCESS


def build_flush_tlb(state: DriverState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DxgkDdiBuildPagingBuffer`` for ``DXGK_OPERATION_FLUSH_TLB``: [Start, End], 0/0 = all."""
    p = args.FlushTlb
    if not state.wddm2:
        raise DriverContractError("Operation", int(p.OPERATION), "FlushTlb is a GpuMmu (WDDM 2.x) operation")
    if p.StartVirtualAddress > p.EndVirtualAddress:
        raise DriverContractError(
            "FlushTlb.StartVirtualAddress", p.StartVirtualAddress, "must not exceed EndVirtualAddress"
        )
    root = table_word(state, p.RootPageTableAddress, "FlushTlb.RootPageTableAddress")
    return single_packet(args, cmd.TlbInvalidate(root, p.StartVirtualAddress, p.EndVirtualAddress))


def build_copy_page_table_entries(state: DriverState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DxgkDdiBuildPagingBuffer`` for ``DXGK_OPERATION_COPY_PAGE_TABLE_ENTRIES``: one COPY per range."""
    p = args.CopyPageTableEntries
    if not state.wddm2:
        raise DriverContractError(
            "Operation", int(p.OPERATION), "CopyPageTableEntries is a GpuMmu (WDDM 2.x) operation"
        )
    if p.NumRanges != len(p.pRanges):
        raise DriverContractError("CopyPageTableEntries.NumRanges", p.NumRanges, f"pRanges holds {len(p.pRanges)}")
    for i, r in enumerate(p.pRanges):
        for name, value in (
            ("SrcPageTableAddress", r.SrcPageTableAddress),
            ("DstPageTableAddress", r.DstPageTableAddress),
        ):
            if value % SIZE_64K:
                raise DriverContractError(f"CopyPageTableEntries.pRanges[{i}].{name}", value, "must be 64 KB aligned")
    writer = DmaWriter(args)

    def emit(done: int) -> int:
        r = p.pRanges[done]
        src = hw_address(Space.GPU_VA, r.SrcPageTableAddress + PTE_SIZE * r.SrcStartPteIndex)
        dst = hw_address(Space.GPU_VA, r.DstPageTableAddress + PTE_SIZE * r.DstStartPteIndex)
        return 1 if writer.put(cmd.Copy(src, dst, PTE_SIZE * r.NumPageTableEntries)) else 0

    return multipass(args, writer, p.NumRanges, emit)
