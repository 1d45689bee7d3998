"""Transfer's one-loop path (decision 0199) against the general path it replaces (:class:`DmaWriter`,
``multipass``, the emitter): the same bytes, statuses, ``MultipassOffset`` and cursor at every paging-buffer size
around the packet limits, for each side an MDL or a segment, contiguous and scattered pages, with and without
``TransferEnd``, and the same named errors."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from wddmsim.core.addresses import CpuVa
from wddmsim.core.pointer import CpuMapping
from wddmsim.core.units import PAGE_SIZE, KiB
from wddmsim.ddi.flags import DXGK_TRANSFERFLAGS
from wddmsim.ddi.memory import MDL
from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_TRANSFER, DXGK_TRANSFER_LOCATION, DXGKARG_BUILDPAGINGBUFFER
from wddmsim.ddi.status import NTSTATUS, DdiError
from wddmsim.hw import commands as cmd
from wddmsim.kmd.config import DriverConfig
from wddmsim.kmd.paging import transfer
from wddmsim.scenarios.rig import PagingRig
from wddmsim.system import SystemConfig

LOCAL = 2
MAX_COPY = 16 * KiB  # four pages a packet: contiguous ranges need several packets too
_SUCCESS = NTSTATUS.STATUS_SUCCESS
Loc = DXGK_TRANSFER_LOCATION


@pytest.fixture(scope="module")
def rig() -> PagingRig:
    return PagingRig(SystemConfig(driver=DriverConfig(max_copy_bytes=MAX_COPY)))


def _mdl(rig: PagingRig, pages: int, *, scattered: bool) -> MDL:
    pool = rig.mm.allocate_pages_for_mdl(2 * pages * PAGE_SIZE)
    pfns = pool.pfns[::2] if scattered else pool.pfns[:pages]
    return MDL(pfns[:pages].copy(), pages * PAGE_SIZE)


def _payload(rig: PagingRig, case: str, size: int, *, end: bool) -> DXGK_BUILDPAGINGBUFFER_TRANSFER:
    pages = -(-size // PAGE_SIZE)
    local = Loc.segment(LOCAL, rig.segment_address(LOCAL, 0))
    other = Loc.segment(LOCAL, rig.segment_address(LOCAL, 16 * 1024 * KiB))
    sides = {
        "segment to scattered pages": (local, Loc.mdl(_mdl(rig, pages + 2, scattered=True))),
        "contiguous pages to segment": (Loc.mdl(_mdl(rig, pages + 2, scattered=False)), local),
        "segment to segment": (local, other),
    }
    src, dst = sides[case]
    return DXGK_BUILDPAGINGBUFFER_TRANSFER(
        TransferSize=size,
        TransferOffset=PAGE_SIZE if case == "segment to segment" else 0,
        MdlOffset=1 if "pages" in case else 0,
        Source=src,
        Destination=dst,
        Flags=DXGK_TRANSFERFLAGS(TransferStart=True, TransferEnd=end),
    )


def _sizes() -> Iterator[int]:
    """Too small for a packet, each packet length of one to three extents and a plain COPY, one byte either side,
    and a buffer that holds everything."""
    yield from (0, 8, 16)
    for length in (cmd.copy_length(0), cmd.copy_length(1), cmd.copy_length(2), cmd.copy_length(3)):
        yield from (length - 1, length, length + 1, length + 16, length + 16 + 15)
    yield 64 * KiB


def _drive(rig: PagingRig, payload: DXGK_BUILDPAGINGBUFFER_TRANSFER, dma: int) -> list[object]:
    """Build ``payload`` into fresh ``dma``-byte buffers until it succeeds or makes no progress; what every call
    returned and wrote, and the transfer state it left."""
    state = rig.driver.state  # type: ignore[attr-defined]
    state.pending_transfer = None
    trail: list[object] = []
    offset = 0
    for _ in range(64):
        mapping = CpuMapping(CpuVa(0x1000_0000), np.full(dma + 64, 0xEE, dtype=np.uint8))
        args = DXGKARG_BUILDPAGINGBUFFER(payload, pDmaBuffer=mapping.pointer(0), DmaSize=dma, MultipassOffset=offset)
        status = rig.driver.build_paging_buffer(args)
        assert args.pDmaBuffer is not None
        row = (status, args.MultipassOffset, args.pDmaBuffer.offset, args.DmaSize, state.pending_transfer)
        trail.append((*row, mapping.data.tobytes()))
        if status == _SUCCESS or (args.MultipassOffset == offset and args.pDmaBuffer.offset == 0):
            return trail
        offset = args.MultipassOffset
    raise AssertionError("the transfer never completed")


def _both(rig: PagingRig, payload: DXGK_BUILDPAGINGBUFFER_TRANSFER, dma: int) -> tuple[list[object], list[object]]:
    fast = _drive(rig, payload, dma)
    transfer._fast_plain = False
    try:
        general = _drive(rig, payload, dma)
    finally:
        transfer._fast_plain = True
    return fast, general


@pytest.mark.parametrize("end", [True, False], ids=["TransferEnd", "no end"])
@pytest.mark.parametrize("size", [PAGE_SIZE, 5 * PAGE_SIZE - 100, 9 * PAGE_SIZE], ids=["1 page", "5 pages", "9 pages"])
@pytest.mark.parametrize("case", ["segment to scattered pages", "contiguous pages to segment", "segment to segment"])
def test_the_one_loop_path_writes_what_the_general_path_writes_at_every_size(
    rig: PagingRig, case: str, size: int, end: bool
) -> None:
    payload = _payload(rig, case, size, end=end)
    for dma in sorted(set(_sizes())):
        fast, general = _both(rig, payload, dma)
        assert fast == general, dma
    whole = _drive(rig, payload, 64 * KiB)
    pages = -(-size // PAGE_SIZE)
    assert [row[:2] for row in whole] == [(_SUCCESS, pages)]  # type: ignore[index]
    packets = cmd.decode_all(whole[0][5], 0, whole[0][2])  # type: ignore[index]
    copies = [p for _, p in packets if isinstance(p, cmd.Copy)]
    assert sum(c.size for c in copies) == size
    assert max(c.size for c in copies) <= MAX_COPY
    assert isinstance(packets[-1][1], cmd.Sync) == end


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("DmaSize", -16, "DmaSize=-0x10: must not be negative"),
        ("MultipassOffset", 6, "MultipassOffset=0x6: must lie in [0, 5]"),
    ],
)
def test_the_one_loop_path_refuses_what_the_general_path_refuses(
    rig: PagingRig, field: str, value: int, expected: str
) -> None:
    payload = _payload(rig, "segment to scattered pages", 5 * PAGE_SIZE, end=True)
    messages = []
    for fast in (True, False):
        transfer._fast_plain = fast
        try:
            rig.driver.state.pending_transfer = None  # type: ignore[attr-defined]
            mapping = CpuMapping(CpuVa(0x1000_0000), np.zeros(PAGE_SIZE, dtype=np.uint8))
            args = DXGKARG_BUILDPAGINGBUFFER(payload, pDmaBuffer=mapping.pointer(0), DmaSize=PAGE_SIZE)
            setattr(args, field, value)
            with pytest.raises(DdiError) as raised:
                rig.driver.build_paging_buffer(args)
            messages.append(f"{type(raised.value).__name__}: {raised.value}")
        finally:
            transfer._fast_plain = True
    assert messages[0] == messages[1]
    assert expected in messages[0]
