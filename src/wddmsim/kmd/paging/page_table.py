"""GpuMmu page-table operations: ``UPDATE_PAGE_TABLE`` (11), ``FLUSH_TLB`` (12), ``COPY_PAGE_TABLE_ENTRIES`` (14).

UpdatePageTable translates ``DXGK_PTE`` entries into hardware words (:mod:`..pte_format`) and writes them the way
``UpdateMode`` says: ``CPU_VIRTUAL`` -- at once, with the CPU, through ``PageTableAddress.CpuVirtual`` (the only
mode allowed with ``pDmaBuffer`` NULL, when the paging process's own tables are initialised); ``GPU_VIRTUAL`` /
``GPU_PHYSICAL`` -- as WRITE_QWORDS packets at the table's paging-process VA / segment address.
``MultipassOffset`` counts the entries done; each pass reads its source entries from
``pPageTableEntries[MultipassOffset:]``, never from 0.

Where the entries land (decision 0011):

* a dual-PTE level-1 entry is 16 bytes: ``pPageTableEntries[i]`` fills its 4 KB-table pointer and
  ``pPageTableEntries64KB[i]`` its 64 KB-table pointer;
* a level-0 update with ``Flags.Use64KBPages`` writes a 64 KB-page leaf table (one entry per 64 KiB, each
  64 KiB aligned); at level 1 without dual PTEs the flag marks the entries as pointing at such tables;
* with GPU pages larger than 4 KiB, VidMm still supplies one entry per 4 KiB; only the entries that start a
  GPU page are written, at index ``i / (GPU page / 4 KiB)``, and their pages must be GPU-page aligned.
"""

from __future__ import annotations

import struct
from typing import final

import numpy as np
import numpy.typing as npt

from wddmsim.core.addresses import GpuPhysAddr
from wddmsim.core.pointer import CpuPointer
from wddmsim.core.units import SIZE_64K
from wddmsim.ddi.base import D3DGPU_PHYSICAL_ADDRESS
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_COPY_RANGE,
    DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE,
    DXGKARG_BUILDPAGINGBUFFER,
)
from wddmsim.ddi.pte import PteArray
from wddmsim.ddi.status import NTSTATUS, InvalidArgument
from wddmsim.drivers.kit.dma import DmaWriter, multipass, single_packet
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import HW_ADDRESS, Space, hw_address
from wddmsim.hw.pte import PTE_SIZE
from wddmsim.kmd.errors import DriverContractError
from wddmsim.kmd.state import DriverState
from wddmsim.kmd.table_geometry import Geometry, table_geometry
from wddmsim.kmd.update_kind import ADDRESS_SHIFT_0D, UpdateKind

Mode = DXGK_PAGETABLEUPDATEMODE
_CPU_VIRTUAL = Mode.DXGK_PAGETABLEUPDATE_CPU_VIRTUAL  # enum members read once (class attribute access is slow)
_GPU_VIRTUAL = Mode.DXGK_PAGETABLEUPDATE_GPU_VIRTUAL
_GPU_VA = Space.GPU_VA
U64 = npt.NDArray[np.uint64]
_PACKET_ADDRESS_MASK = HW_ADDRESS["address"].mask
_SUCCESS = NTSTATUS.STATUS_SUCCESS
_INSUFFICIENT = NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER
_ALIGN_DOWN = ~(cmd.PACKET_ALIGNMENT - 1)
_WQ_FIXED = cmd.WRITE_QWORDS_FIXED_SIZE
_WQ_HEADER = cmd.WRITE_QWORDS_HEADER
_OP_WRITE_QWORDS = int(cmd.Opcode.WRITE_QWORDS)
_PAD = cmd.PACKET_ALIGNMENT - 1
_PAD_WORD = struct.Struct("<Q")
_GPU_VA_WORD = hw_address(_GPU_VA, 0)
_VA_NAME = "UpdatePageTable.PageTableAddress.GpuVirtual"
_UPDATE = DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE


def table_word(state: DriverState, address: D3DGPU_PHYSICAL_ADDRESS, argument: str) -> int:
    """Packet address of a table given as (SegmentId, SegmentOffset); segment 0 is system memory."""
    if address.SegmentId == 0:
        if not state.gpu.system.contains(address.SegmentOffset, PTE_SIZE):
            raise DriverContractError(f"{argument}.SegmentOffset", address.SegmentOffset, "is outside system memory")
        return hw_address(Space.SYSTEM, address.SegmentOffset)
    segment = state.segments.memory_segment(address.SegmentId, f"{argument}.SegmentId")
    at = GpuPhysAddr(segment.base + address.SegmentOffset)
    return state.segments.address(address.SegmentId, at, PTE_SIZE, argument)


def va_word(va: int, argument: str) -> int:
    """Packet address of a paging-process GPU VA; a VA past the packet's 60-bit address field is refused, named
    (decision 0122), not left to the encoder's ValueError."""
    if not 0 <= va <= _PACKET_ADDRESS_MASK:
        raise DriverContractError(argument, va, "does not fit the 60-bit address field of a GPU packet")
    return hw_address(_GPU_VA, va)


def geometry(state: DriverState, p: DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE) -> Geometry:
    """The geometry of the table an update writes (worked out once per level and leaf kind: the MMU's layout
    never changes)."""
    key = (p.PageTableLevel, p.PageTableLevel == 0 and p.Flags.Use64KBPages)
    shape = state.page_table_shapes.get(key)
    if shape is None:
        shape = state.page_table_shapes[key] = table_geometry(state.gpu.mmu.layout, *key)
    return shape


def _check(state: DriverState, p: DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, shape: Geometry) -> None:
    layout = state.gpu.mmu.layout
    if p.Reserved0:
        raise DriverContractError("UpdatePageTable.Reserved0", p.Reserved0, "must be zero")
    if p.Flags.Reserved:
        raise DriverContractError("UpdatePageTable.Flags.Reserved", p.Flags.Reserved, "must be zero")
    if not 0 <= p.PageTableLevel < layout.levels:
        raise DriverContractError(
            "UpdatePageTable.PageTableLevel", p.PageTableLevel, f"levels are 0..{layout.levels - 1}"
        )
    count = shape.entries_in_table
    if p.NumPageTableEntries < 0 or p.StartIndex < 0 or p.StartIndex + p.NumPageTableEntries > count:
        raise DriverContractError(
            "UpdatePageTable.StartIndex",
            p.StartIndex,
            f"{p.NumPageTableEntries} entries from it leave the {count}-entry table",
        )
    needed = 1 if p.Flags.Repeat else p.NumPageTableEntries
    if p.pPageTableEntries.shape[0] < needed:
        raise DriverContractError(
            "UpdatePageTable.pPageTableEntries", p.pPageTableEntries.shape[0], f"needs {needed} entries"
        )
    big = p.pPageTableEntries64KB
    if big is not None:
        if shape.words_per_entry != 2:
            raise DriverContractError(
                "UpdatePageTable.pPageTableEntries64KB",
                big.shape[0],
                "is used only for level-1 entries with DualPteSupported",
            )
        if big.shape[0] < needed:
            raise DriverContractError("UpdatePageTable.pPageTableEntries64KB", big.shape[0], f"needs {needed} entries")


def build_update_page_table(state: DriverState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DxgkDdiBuildPagingBuffer`` for ``DXGK_OPERATION_UPDATE_PAGE_TABLE``."""
    p = args.payload
    if p.__class__ is not _UPDATE:  # a subclass, or the wrong member: the union member's own check
        p = args.UpdatePageTable
    if not state.wddm2:
        raise DriverContractError("Operation", int(p.OPERATION), "UpdatePageTable is a GpuMmu (WDDM 2.x) operation")
    flags, level = p.Flags, p.PageTableLevel
    key = (level, flags.Use64KBPages, flags.Repeat, p.DriverProtection & 0xFF if level == 0 else 0)
    kind = state.update_kinds.get(key)
    if kind is None:  # worked out once the update is known to be well-formed: a refused one caches nothing
        _check(state, p, geometry(state, p))
        kind = state.update_kinds[key] = _update_kind(state, p, geometry(state, p))
    else:  # what _check would refuse, for a kind known good: the per-call fields in one expression (_check names it)
        count, start = p.NumPageTableEntries, p.StartIndex
        if (
            p.Reserved0
            or flags.Reserved
            or count < 0
            or start < 0
            or start + count > kind.entries_in_table
            or p.pPageTableEntries.shape[0] < (1 if kind.repeat else count)
            or p.pPageTableEntries64KB is not None
        ):
            _check(state, p, kind.shape)
    mode = p.UpdateMode
    if mode == _CPU_VIRTUAL:
        return _update_by_cpu(args, _Chunker(p, kind))
    if args.pDmaBuffer is None:
        raise DriverContractError("pDmaBuffer", None, "NULL only with the forced CPU_VIRTUAL update mode")
    if mode == _GPU_VIRTUAL:
        va = p.PageTableAddress.GpuVirtual
        base = _GPU_VA_WORD | va if va.__class__ is int and 0 <= va <= _PACKET_ADDRESS_MASK else va_word(va, _VA_NAME)
    else:
        base = table_word(state, p.PageTableAddress.GpuPhysical, "UpdatePageTable.PageTableAddress.GpuPhysical")
    if kind.plain and _fast_plain:
        return _update_plain(args, p, kind, base)
    return _update_general(args, p, kind.shape, _Chunker(p, kind), base)


def _update_kind(state: DriverState, p: DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, shape: Geometry) -> UpdateKind:
    level = p.PageTableLevel
    dual = state.gpu.mmu.layout.dual_pte
    translator = state.pte_tables.translator(level, dual, p.DriverProtection if level == 0 else 0)
    return UpdateKind(
        shape, translator, leaf64k=level == 1 and not dual and p.Flags.Use64KBPages, repeat=p.Flags.Repeat
    )


_fast_plain = True
"""Whether plain updates take :func:`_update_plain` (tests turn it off to hold it to the general path's bytes)."""


def _update_plain(
    args: DXGKARG_BUILDPAGINGBUFFER, p: DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, kind: UpdateKind, base: int
) -> NTSTATUS:
    """The general path's multipass loop for one word per entry, flattened: the per-call cost of the most frequent
    DDI call is its Python calls, not its entries.  Each WRITE_QWORDS header is packed in place and the entries
    are translated straight into its inline words; the same checks, in the same order, as :class:`DmaWriter` and
    :func:`multipass`."""
    pointer = args.pDmaBuffer
    assert pointer is not None  # the caller refused None
    size = args.DmaSize
    if size < 0:
        raise InvalidArgument("DmaSize", size, "must not be negative")
    done, total = args.MultipassOffset, p.NumPageTableEntries
    if not 0 <= done <= total:
        raise InvalidArgument("MultipassOffset", done, f"must lie in [0, {total}] for this operation")
    mapping = pointer.mapping
    buf, all_words = mapping.view, mapping.words
    pos = start = pointer.offset
    end = start + size
    entries, first_word = p.pPageTableEntries, base + PTE_SIZE * p.StartIndex
    translate_into, quick, lane, aligned = kind.translate_into, kind.quick, kind.quick_lane, kind.aligned_bytes
    status = _SUCCESS
    while done < total:
        n = (((end - pos) & _ALIGN_DOWN) - _WQ_FIXED) >> 3  # the words that fit
        if n >= total - done:
            n = total - done
        elif n <= 0:
            status = _INSUFFICIENT
            break
        inline = pos + _WQ_FIXED
        words_end = inline + 8 * n
        length = (words_end - pos + _PAD) & ~_PAD  # cmd.write_qwords_length(n), without the call
        _WQ_HEADER.pack_into(buf, pos, _OP_WRITE_QWORDS, 0, length, first_word + PTE_SIZE * done, n, 0)
        if words_end != pos + length:  # the one padding word (the header is 24 bytes, packets are 16-aligned)
            _PAD_WORD.pack_into(buf, words_end, 0)
        if all_words is not None and not inline & 7:
            out: U64 = all_words[inline >> 3 : words_end >> 3]
        else:
            out = mapping.data[inline:words_end].view(cmd.LE_U64)
        source = entries if n == len(entries) else entries[done : done + n]
        flags = source["Flags"]  # translate_into's plan path for a quick plan, without the call (UpdateKind.quick)
        plan = quick.get(flags.item(0))
        if plan is None or (n > 1 and not plan[0].startswith(flags.tobytes())):
            translate_into(out, source, "pPageTableEntries")
        else:
            np.left_shift(source["PageAddress"], ADDRESS_SHIFT_0D, out)
            np.add(out, plan[1], out)
            if plan[2] is not None:
                np.bitwise_or(out, plan[2], out)
            if lane >= 0 and out.tobytes()[lane::8].translate(None, aligned):
                kind.refuse_misaligned(out, "pPageTableEntries")
        pos += length
        done += n
    args.pDmaBuffer = CpuPointer(mapping, pos)  # advance(), without the call
    args.DmaSize = size - (pos - start)
    args.MultipassOffset = done
    return status


def _update_general(
    args: DXGKARG_BUILDPAGINGBUFFER,
    p: DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE,
    shape: Geometry,
    chunk: _Chunker,
    base: int,
) -> NTSTATUS:
    """Any update: packets cut by :class:`_Chunker` (pairs of words, GPU pages larger than 4 KiB, Repeat)."""
    writer = DmaWriter(args)

    def emit(done: int) -> int:
        room = cmd.max_qwords_in(writer.room)
        if room < shape.words_per_entry:
            return 0
        covered, first_word, words, repeat = chunk.next(done, room)
        if words.shape[0]:
            count = repeat if repeat else words.shape[0]
            data = words[:1] if repeat else words
            writer.pos += cmd.encode_write_qwords_into(
                writer.buf, writer.pos, base + PTE_SIZE * first_word, count, data, repeat=bool(repeat)
            )
        return covered

    return multipass(args, writer, p.NumPageTableEntries, emit)


def _update_by_cpu(args: DXGKARG_BUILDPAGINGBUFFER, chunk: _Chunker) -> NTSTATUS:
    p = args.UpdatePageTable
    pointer = p.PageTableAddress.CpuVirtual
    if pointer is None:
        raise DriverContractError(
            "UpdatePageTable.PageTableAddress.CpuVirtual", None, "CPU_VIRTUAL updates need the table's CPU VA"
        )
    done = 0
    while done < p.NumPageTableEntries:
        covered, first_word, words, repeat = chunk.next(done, p.NumPageTableEntries * 2 + 2)
        if repeat:
            words = np.repeat(words[:1], repeat)
        if words.shape[0]:
            (pointer + PTE_SIZE * first_word).bytes(PTE_SIZE * words.shape[0])[:] = words.astype("<u8").tobytes()
        done += covered
    args.MultipassOffset = done
    return NTSTATUS.STATUS_SUCCESS


@final
class _Chunker:
    """Turns entries ``[done, done + n)`` of the update into hardware words at a word offset in the table."""

    __slots__ = ("kind", "p", "shape", "translate_into")

    def __init__(self, p: DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, kind: UpdateKind) -> None:
        self.p = p
        self.kind = kind
        self.shape = kind.shape
        self.translate_into = kind.translate_into

    def _words(self, source: PteArray, argument: str) -> U64:
        words: U64 = np.empty(source.shape[0], dtype=cmd.LE_U64)  # translate_into makes little-endian words
        self.translate_into(words, source, argument)
        return words

    def next(self, done: int, room_words: int) -> tuple[int, int, U64, int]:
        """``(entries covered, first hardware word, words, repeat count or 0)`` for the chunk at ``done``."""
        p, shape = self.p, self.shape
        left = p.NumPageTableEntries - done
        start = p.StartIndex + done
        repeat = p.Flags.Repeat
        if shape.words_per_entry == 2:
            n = min(left, room_words // 2)
            small = self._source(p.pPageTableEntries, done, n, "pPageTableEntries")
            big_source = p.pPageTableEntries64KB
            big = (
                self._source(big_source, done, n, "pPageTableEntries64KB")
                if big_source is not None
                else np.zeros(n, dtype=np.uint64)
            )
            words = np.empty(2 * n, dtype=np.uint64)
            words[0::2], words[1::2] = small, big
            return n, 2 * start, words, 0
        if shape.ratio == 1:
            if repeat:
                return left, start, self._words(p.pPageTableEntries[:1], "pPageTableEntries"), left
            n = min(left, room_words)
            return n, start, self._source(p.pPageTableEntries, done, n, "pPageTableEntries"), 0
        # GPU pages larger than 4 KiB: only entries that start a GPU page are written.
        ratio = shape.ratio
        first_start = -(-start // ratio) * ratio
        n = min(left, max(first_start - start, 0) + room_words * ratio)
        picked = np.arange(first_start - start, n, ratio) + done
        if picked.shape[0] == 0:
            return n, 0, np.zeros(0, dtype=np.uint64), 0
        source = p.pPageTableEntries[:1].repeat(picked.shape[0]) if repeat else p.pPageTableEntries[picked]
        return n, first_start // ratio, self._words(source, "pPageTableEntries"), 0

    def _source(self, array: PteArray, done: int, n: int, argument: str) -> U64:
        if self.p.Flags.Repeat:
            return np.repeat(self._words(array[:1], argument), n)
        return self._words(array[done : done + n], argument)


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
    ends = [_copy_ends(i, r) for i, r in enumerate(p.pRanges)]
    writer = DmaWriter(args)

    def emit(done: int) -> int:
        src, dst = ends[done]
        size = PTE_SIZE * p.pRanges[done].NumPageTableEntries
        return 1 if writer.put(cmd.Copy(src, dst, size)) else 0

    return multipass(args, writer, p.NumRanges, emit)


def _copy_ends(i: int, r: DXGK_BUILDPAGINGBUFFER_COPY_RANGE) -> tuple[int, int]:
    """The packet addresses of range ``i``'s first source and destination entries (both tables 64 KB aligned)."""
    ends = []
    for name, table, index in (
        ("Src", r.SrcPageTableAddress, r.SrcStartPteIndex),
        ("Dst", r.DstPageTableAddress, r.DstStartPteIndex),
    ):
        argument = f"CopyPageTableEntries.pRanges[{i}].{name}PageTableAddress"
        if table % SIZE_64K:
            raise DriverContractError(argument, table, "must be 64 KB aligned")
        ends.append(va_word(table + PTE_SIZE * index, argument))
    return ends[0], ends[1]
