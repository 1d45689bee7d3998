"""``DXGK_OPERATION_TRANSFER`` (0) and ``DXGK_OPERATION_SPECIAL_LOCK_TRANSFER`` (7).

A transfer is cut into *pieces*: plain byte ranges, and -- for ``Swizzle`` / ``Unswizzle`` -- the parts of each
surface level it covers, which must be whole tile rows.  Pieces are cut into COPY packets of at most
``max_copy_bytes``; on the system-memory side a packet lists the MDL pages it runs through, as coalesced
extents, as many as the buffer has room for.  ``MultipassOffset`` counts the 4 KiB pages done; the segment side
of page ``i`` is at ``SegmentAddress + TransferOffset + 4096 i`` and the MDL side is MDL page ``MdlOffset + i``
on every pass.  ``TransferEnd`` adds a SYNC after the last packet.
"""

from __future__ import annotations

from dataclasses import dataclass

from wddmsim.core.addresses import GpuPhysAddr
from wddmsim.core.pointer import CpuPointer
from wddmsim.core.units import PAGE_SHIFT, PAGE_SIZE, pages_spanned
from wddmsim.ddi.flags import DXGK_TRANSFERFLAGS
from wddmsim.ddi.paging import (
    DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER,
    DXGK_BUILDPAGINGBUFFER_TRANSFER,
    DXGK_TRANSFER_LOCATION,
    DXGKARG_BUILDPAGINGBUFFER,
)
from wddmsim.ddi.status import NTSTATUS, InvalidArgument
from wddmsim.drivers.kit.dma import DmaWriter, multipass
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import HW_ADDRESS, Space, hw_address
from wddmsim.kmd.allocations import KmdAllocation
from wddmsim.kmd.errors import DriverContractError
from wddmsim.kmd.state import DriverState

Payload = DXGK_BUILDPAGINGBUFFER_TRANSFER | DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER
_TRANSFORM_LSB = cmd.COPY_FLAGS["Transform"].lsb
_SRC_PAGES = cmd.COPY_FLAGS["SrcPages"].shifted_mask  # read once: a bit-field lookup per packet adds up
_DST_PAGES = cmd.COPY_FLAGS["DstPages"].shifted_mask
_PLAIN_COPY_LENGTH = cmd.copy_length(0)
_SYNC_LENGTH = len(cmd.SYNC_BYTES)
_SIDES = {name: (f"{name}.Source", f"{name}.Destination") for name in ("Transfer", "SpecialLockTransfer")}
"""The argument names of each operation's two sides, made once (they name a refused side)."""
_GPU_PHYS = Space.GPU_PHYS
_ADDRESS_MASK = HW_ADDRESS["address"].mask
_PAD = cmd.PACKET_ALIGNMENT - 1
_COPY_FIXED = cmd.COPY_FIXED_SIZE
_TRANSFER = DXGK_BUILDPAGINGBUFFER_TRANSFER


_SUCCESS = NTSTATUS.STATUS_SUCCESS
_INSUFFICIENT = NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER


@dataclass(frozen=True, slots=True)
class Piece:
    """Pages ``[first, stop)`` of the transfer, copied with ``transform`` in granules of ``granule`` pages."""

    first: int
    stop: int
    transform: cmd.Transform = cmd.Transform.NONE
    pitch: int = 0
    granule: int = 1


def plan(allocation: KmdAllocation | None, offset: int, size: int, flags: DXGK_TRANSFERFLAGS) -> list[Piece]:
    """Cut allocation bytes ``[offset, offset + size)`` into pieces (see the module docstring)."""
    pages = pages_spanned(size)
    if not (flags.Swizzle or flags.Unswizzle) or allocation is None or not allocation.levels:
        return [Piece(0, pages)] if pages else []
    transform = cmd.Transform.TILE if flags.Swizzle else cmd.Transform.UNTILE
    pieces: list[Piece] = []
    cursor = offset
    end = offset + size
    for level in allocation.levels:
        lo, hi = max(cursor, level.offset), min(end, level.offset + level.size)
        if lo >= hi:
            continue
        if (lo - level.offset) % level.tile_row_size or (hi - level.offset) % level.tile_row_size:
            raise DriverContractError(
                "Transfer.TransferOffset",
                offset,
                f"a swizzling transfer must cover whole tile rows ({level.tile_row_size:#x} bytes) of each level",
            )
        if lo > cursor:
            pieces.append(Piece((cursor - offset) >> PAGE_SHIFT, (lo - offset) >> PAGE_SHIFT))
        pieces.append(
            Piece(
                (lo - offset) >> PAGE_SHIFT,
                (hi - offset) >> PAGE_SHIFT,
                transform,
                level.pitch,
                level.tile_row_size >> PAGE_SHIFT,
            )
        )
        cursor = hi
    if cursor < end:
        pieces.append(Piece((cursor - offset) >> PAGE_SHIFT, pages))
    return pieces


def _check(state: DriverState, p: Payload, name: str, mdl_offset: int) -> tuple[KmdAllocation | None, int]:
    """The payload's contract checks; the common answer (every check passes) tested in one pass, and
    :func:`_check_each` in their order to name what is wrong (decision 0213)."""
    flags, size, offset = p.Flags, p.TransferSize, p.TransferOffset
    pages = -(-size // PAGE_SIZE)  # pages_spanned, without the call
    source, destination = p.Source, p.Destination
    if (
        offset % PAGE_SIZE
        or size < 0
        or (flags.Swizzle and flags.Unswizzle)
        or flags.Reserved
        or not (source.SegmentId or destination.SegmentId)
    ):
        return _check_each(state, p, name, mdl_offset)
    for location in (source, destination):  # each side: an MDL that starts on a page and holds the pages from
        segment_id = location.SegmentId  # mdl_offset, or a range inside an existing segment
        if segment_id == 0:
            mdl = location.pMdl
            if mdl is None or mdl.ByteOffset or mdl_offset < 0 or mdl_offset + pages > mdl.pfns.shape[0]:
                return _check_each(state, p, name, mdl_offset)
            continue
        segments = state.segments.segments
        if not 0 < segment_id <= len(segments):
            return _check_each(state, p, name, mdl_offset)
        segment = segments[segment_id - 1]
        start = location.SegmentAddress + offset
        if not (segment.base <= start and start + size <= segment.base + segment.size):
            return _check_each(state, p, name, mdl_offset)
    # Only the allocation is left, the next check in _check_each's order: its refusal is the same.
    return state.allocations.get(p.hAllocation, f"{name}.hAllocation") if p.hAllocation else None, pages


def _check_each(state: DriverState, p: Payload, name: str, mdl_offset: int) -> tuple[KmdAllocation | None, int]:
    """Every check in order; the first that fails raises its named error."""
    if p.TransferOffset % PAGE_SIZE:
        raise DriverContractError(
            f"{name}.TransferOffset", p.TransferOffset, "must be a multiple of 4 KiB (the first page)"
        )
    if p.TransferSize < 0:
        raise DriverContractError(f"{name}.TransferSize", p.TransferSize, "must not be negative")
    if p.Flags.Swizzle and p.Flags.Unswizzle:
        raise DriverContractError(f"{name}.Flags", p.Flags.Value, "Swizzle and Unswizzle are exclusive")
    if p.Flags.Reserved:
        raise DriverContractError(f"{name}.Flags.Reserved", p.Flags.Reserved, "must be zero")
    allocation = state.allocations.get(p.hAllocation, f"{name}.hAllocation") if p.hAllocation else None
    pages = pages_spanned(p.TransferSize)
    source, destination = _SIDES[name]
    for side, location in ((source, p.Source), (destination, p.Destination)):
        if location.SegmentId == 0:
            mdl = location.pMdl
            if mdl is None:
                raise DriverContractError(f"{side}.pMdl", None, "SegmentId 0 means an MDL describes this side")
            if mdl.ByteOffset:
                raise DriverContractError(f"{side}.pMdl.ByteOffset", mdl.ByteOffset, "paging MDLs start on a page")
            if mdl_offset < 0 or mdl_offset + pages > mdl.pfns.shape[0]:
                raise DriverContractError(
                    f"{name}.MdlOffset", mdl_offset, f"{pages} page(s) from it leave the MDL's {mdl.page_count}"
                )
        else:
            state.segments.address(
                location.SegmentId,
                GpuPhysAddr(location.SegmentAddress + p.TransferOffset),
                p.TransferSize,
                side,
            )
    if p.Source.SegmentId == 0 and p.Destination.SegmentId == 0:
        raise DriverContractError(
            f"{name}.Destination.SegmentId", 0, "system memory to system memory is not a paging transfer"
        )
    return allocation, pages


def _transfer_state(state: DriverState, args: DXGKARG_BUILDPAGINGBUFFER, p: Payload, name: str) -> None:
    """Track TransferStart / TransferEnd: the end of a pending transfer always precedes the next start."""
    if args.MultipassOffset != 0:
        return
    if p.Flags.TransferStart:
        if state.pending_transfer is not None:
            raise DriverContractError(
                f"{name}.Flags.TransferStart", 1, f"allocation {state.pending_transfer:#x}'s transfer has not ended"
            )
        state.pending_transfer = p.hAllocation
    elif state.pending_transfer is None:
        raise DriverContractError(
            f"{name}.Flags", p.Flags.Value, "a sub-transfer without TransferStart needs a pending transfer"
        )


def build_transfer(state: DriverState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DxgkDdiBuildPagingBuffer`` for ``DXGK_OPERATION_TRANSFER``."""
    p = args.payload
    if p.__class__ is not _TRANSFER:  # a subclass, or the wrong member: the union member's own check
        p = args.Transfer
    return _build(state, args, p, "Transfer", p.MdlOffset)


def build_special_lock_transfer(state: DriverState, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
    """``DxgkDdiBuildPagingBuffer`` for ``DXGK_OPERATION_SPECIAL_LOCK_TRANSFER``: through the alternate VA's range."""
    p = args.SpecialLockTransfer
    if state.wddm2 or not state.config.use_alternate_va:
        raise DriverContractError(
            "Operation", int(p.OPERATION), "SpecialLockTransfer needs a WDDM 1.x driver with UseAlternateVA"
        )
    allocation = state.allocations.get(p.hAllocation, "SpecialLockTransfer.hAllocation")
    key = (p.SwizzlingRangeId, p.SwizzlingRangeData)
    if allocation.holds_detile_window and key not in allocation.swizzling_ranges:
        raise DriverContractError(
            "SpecialLockTransfer.SwizzlingRangeId", p.SwizzlingRangeId, "is not this allocation's range"
        )
    return _build(state, args, p, "SpecialLockTransfer", 0)


def _build(state: DriverState, args: DXGKARG_BUILDPAGINGBUFFER, p: Payload, name: str, mdl_offset: int) -> NTSTATUS:
    allocation, pages = _check(state, p, name, mdl_offset)
    if args.MultipassOffset == 0 and allocation is not None and allocation.holds_detile_window:
        # The detiling register is MMIO: it must change exactly when the content moves, which the CPU can
        # only guarantee while nothing on the GPU uses the allocation.
        if not p.Flags.AllocationIsIdle:
            return NTSTATUS.STATUS_GRAPHICS_ALLOCATION_BUSY
        state.release_detile_windows(allocation)
    flags = p.Flags
    if args.MultipassOffset == 0 and flags.TransferStart and state.pending_transfer is None:
        state.pending_transfer = p.hAllocation  # _transfer_state's usual answer, without the call
    else:
        _transfer_state(state, args, p, name)
    if _fast_plain and not (allocation is not None and allocation.levels and (flags.Swizzle or flags.Unswizzle)):
        status = _build_plain(state, args, p, pages, mdl_offset)
    else:
        writer = DmaWriter(args)
        pieces = plan(allocation, p.TransferOffset, p.TransferSize, flags)
        emit = _Emitter(state, p, writer, pieces, mdl_offset)
        status = multipass(args, writer, pages, emit, tail=cmd.SYNC_BYTES if flags.TransferEnd else None)
    if status == _SUCCESS and flags.TransferEnd:
        state.pending_transfer = None
    elif flags.TransferStart and args.MultipassOffset == 0:
        # No room for a single packet: the transfer has not started.  VidMm calls again, MultipassOffset still 0,
        # in a fresh buffer -- the same start, not a second one.
        state.pending_transfer = None
    return status


_FEW_PAGES = 16
"""A COPY of at most this many MDL pages has its extent words worked out and packed as ints (no arrays)."""

_fast_plain = True
"""Whether transfers of one plain piece take :func:`_build_plain` (tests turn it off to hold it to the general
path's bytes)."""


def _build_plain(
    state: DriverState, args: DXGKARG_BUILDPAGINGBUFFER, p: Payload, pages: int, mdl_offset: int
) -> NTSTATUS:
    """The general path (:class:`DmaWriter`, :func:`multipass`, :class:`_Emitter`) for a transfer that is one
    piece without a transform -- every transfer but a swizzling one -- in one loop: the same packets, checks and
    multipass state, without a call per layer."""
    pointer = args.pDmaBuffer
    if pointer is None:
        raise InvalidArgument("pDmaBuffer", None, "must point into the DMA buffer: this operation writes packets")
    size = args.DmaSize
    if size < 0:
        raise InvalidArgument("DmaSize", size, "must not be negative")
    done = args.MultipassOffset
    if not 0 <= done <= pages:
        raise InvalidArgument("MultipassOffset", done, f"must lie in [0, {pages}] for this operation")
    buf = pointer.mapping.view
    pos = start = pointer.offset
    end = start + size
    src, dst = p.Source, p.Destination
    max_pages = state.config.max_copy_bytes >> PAGE_SHIFT
    if max_pages < 1:  # comparisons, not max()/min(): calls add up on a one-page transfer
        max_pages = 1
    last_byte = p.TransferSize
    # Packet address words of page 0 on each segment side (page i is 4096 i further on).
    src_base = src.SegmentAddress + p.TransferOffset if src.SegmentId else -1
    dst_base = dst.SegmentAddress + p.TransferOffset if dst.SegmentId else -1
    pfns = None
    flags = 0
    if src.SegmentId == 0 or dst.SegmentId == 0:
        mdl = src.pMdl if src.SegmentId == 0 else dst.pMdl
        assert mdl is not None  # _check refused an MDL side without one
        pfns = mdl.pfns
        flags = _SRC_PAGES if src.SegmentId == 0 else _DST_PAGES
    status = _SUCCESS
    while done < pages:
        n = pages - done
        if n > max_pages:
            n = max_pages
        extents = None
        words: list[int] | None = None
        if pfns is None:
            if end - pos < _PLAIN_COPY_LENGTH:
                status = _INSUFFICIENT
                break
        else:
            room_extents = (((end - pos) & ~_PAD) - _COPY_FIXED) // 8  # cmd.max_extents_in, without the call
            if room_extents < 1:
                status = _INSUFFICIENT
                break
            first = mdl_offset + done
            if n == 1:  # one page is one extent word: its PFN with a count field of 0
                words = [pfns.item(first)]
            elif n <= _FEW_PAGES:  # a small transfer: no arrays
                words = cmd.small_extents(pfns[first : first + n].tolist())
            if words is None or len(words) > room_extents:
                run = pfns[first : first + n]
                words = None
                extents = cmd.make_extents(run)
                if extents.shape[0] > room_extents:
                    n = int(cmd.extent_pages(extents[:room_extents]).sum())
                    extents = cmd.make_extents(run[:n])
        offset = done << PAGE_SHIFT
        # hw_address(GPU_PHYS, ...): that space is 0, so an address in range is its own word
        src_word = 0 if src_base < 0 else src_base + offset
        if not 0 <= src_word <= _ADDRESS_MASK:
            src_word = hw_address(_GPU_PHYS, src_word)
        dst_word = 0 if dst_base < 0 else dst_base + offset
        if not 0 <= dst_word <= _ADDRESS_MASK:
            dst_word = hw_address(_GPU_PHYS, dst_word)
        nbytes = n << PAGE_SHIFT
        if nbytes > last_byte - offset:
            nbytes = last_byte - offset
        if words is not None:
            pos += cmd.encode_copy_words_into(buf, pos, src_word, dst_word, nbytes, flags, words)
        else:
            pos += cmd.encode_copy_into(buf, pos, src_word, dst_word, nbytes, flags=flags, extents=extents)
        done += n
    else:
        if p.Flags.TransferEnd:
            if end - pos < _SYNC_LENGTH:
                status = _INSUFFICIENT
            else:
                buf[pos : pos + _SYNC_LENGTH] = cmd.SYNC_BYTES
                pos += _SYNC_LENGTH
    # advance(args, pos - start, done), without the call
    args.pDmaBuffer = CpuPointer(pointer.mapping, pos)
    args.DmaSize -= pos - start
    args.MultipassOffset = done
    return status


class _Emitter:
    """Writes the COPY packet that starts at a given page of the transfer."""

    __slots__ = ("max_pages", "mdl_offset", "p", "pieces", "writer")

    def __init__(self, state: DriverState, p: Payload, writer: DmaWriter, pieces: list[Piece], mdl_offset: int) -> None:
        self.p = p
        self.writer = writer
        self.pieces = pieces
        self.mdl_offset = mdl_offset
        self.max_pages = state.config.max_copy_bytes >> PAGE_SHIFT

    def _piece(self, done: int) -> Piece:
        for piece in self.pieces:
            if piece.first <= done < piece.stop:
                return piece
        raise AssertionError(f"page {done} is in no piece")

    def __call__(self, done: int) -> int:
        p, writer = self.p, self.writer
        piece = self._piece(done)
        limit = min(piece.stop - done, max(self.max_pages // piece.granule, 1) * piece.granule)
        flags = piece.transform << _TRANSFORM_LSB
        src, dst = p.Source, p.Destination
        if src.SegmentId and dst.SegmentId:
            if writer.end - writer.pos < _PLAIN_COPY_LENGTH:
                return 0
            pages = limit
            extents = None
            src_word = self._segment_word(src, done)
            dst_word = self._segment_word(dst, done)
        else:
            mdl_side = src if src.SegmentId == 0 else dst
            assert mdl_side.pMdl is not None
            room_extents = cmd.max_extents_in(writer.end - writer.pos)
            if room_extents < 1:
                return 0
            first = self.mdl_offset + done
            pfns = mdl_side.pMdl.pfns[first : first + limit]
            extents = cmd.make_extents(pfns)
            pages = limit
            if extents.shape[0] > room_extents:
                extents = extents[:room_extents]
                pages = int(cmd.extent_pages(extents).sum())
                pages -= pages % piece.granule
                if pages == 0:
                    return 0
                extents = cmd.make_extents(pfns[:pages])
            if src.SegmentId == 0:
                flags |= _SRC_PAGES
                src_word, dst_word = 0, self._segment_word(dst, done)
            else:
                flags |= _DST_PAGES
                src_word, dst_word = self._segment_word(src, done), 0
        size = min(pages << PAGE_SHIFT, p.TransferSize - (done << PAGE_SHIFT))
        writer.pos += cmd.encode_copy_into(
            writer.buf, writer.pos, src_word, dst_word, size, flags=flags, pitch=piece.pitch, extents=extents
        )
        return pages

    def _segment_word(self, location: DXGK_TRANSFER_LOCATION, done: int) -> int:
        return hw_address(Space.GPU_PHYS, location.SegmentAddress + self.p.TransferOffset + (done << PAGE_SHIFT))


__all__ = ["Piece", "build_special_lock_transfer", "build_transfer", "plan"]
