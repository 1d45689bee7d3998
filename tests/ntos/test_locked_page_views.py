"""``MmMapLockedPagesSpecifyCache`` / ``MmUnmapLockedPages``: host addresses a native driver writes an MDL's
bytes through, a table of the live ones, and clean refusals."""

from __future__ import annotations

import ctypes
import sys

import numpy as np
import pytest

from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.memory import MDL
from wddmsim.ddi.status import NTSTATUS, DdiError, InvalidArgument
from wddmsim.system import Adapter
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="host views need Linux memory files")

SURFACE = "MmMapLockedPagesSpecifyCache"


@pytest.fixture
def adapter() -> Adapter:
    return Adapter()


def _scattered(adapter: Adapter, pages: int, byte_offset: int, byte_count: int) -> MDL:
    """An MDL over every other frame of a fresh allocation (so its frames are not contiguous)."""
    backing = adapter.mm.allocate_pages_for_mdl(2 * pages * PAGE_SIZE)
    pfns = backing.pfns[::2].copy()
    pfns[0], pfns[-1] = pfns[-1], pfns[0]
    return MDL(pfns, byte_count, byte_offset)


@pytest.mark.parametrize(
    ("pages", "byte_offset", "byte_count"),
    [(1, 0, PAGE_SIZE), (3, 0x10, 2 * PAGE_SIZE + 7), (5, 0xFFF, 4 * PAGE_SIZE + 1)],
)
def test_the_address_is_the_mdls_first_byte_and_writes_reach_its_pages(
    adapter: Adapter, pages: int, byte_offset: int, byte_count: int
) -> None:
    mdl = _scattered(adapter, pages, byte_offset, byte_count)
    start = adapter.footprint()
    address = adapter.mm.MmMapLockedPagesSpecifyCache(mdl)
    assert adapter.footprint().host_views == start.host_views + 1
    payload = np.random.default_rng(pages).integers(0, 256, byte_count, dtype=np.uint8).tobytes()
    ctypes.memmove(address, payload, byte_count)  # the driver's RtlCopyMemory
    assert adapter.mm.read(mdl, 0, byte_count) == payload
    # The first byte is ByteOffset into the first frame.
    assert adapter.gpu.system.read((int(mdl.pfns[0]) << 12) + byte_offset, 1) == payload[:1]
    adapter.mm.write(mdl, byte_count - 3, b"abc")
    assert ctypes.string_at(address + byte_count - 3, 3) == b"abc"
    adapter.mm.MmUnmapLockedPages(address, mdl)
    assert adapter.footprint() == start
    campaign.record(SURFACE, Outcome.ACCEPTED)


def test_an_unmap_of_an_unknown_address_is_refused_and_changes_nothing(adapter: Adapter) -> None:
    mdl = _scattered(adapter, 2, 0, 2 * PAGE_SIZE)
    other = _scattered(adapter, 2, 0, 2 * PAGE_SIZE)
    address = adapter.mm.MmMapLockedPagesSpecifyCache(mdl)
    before = adapter.footprint()
    for bad in (address + 1, 0, adapter.gpu.local.host_address):
        with campaign.case("MmUnmapLockedPages") as box, pytest.raises(InvalidArgument) as caught:
            adapter.mm.MmUnmapLockedPages(bad, mdl)
        assert caught.value.status == NTSTATUS.STATUS_INVALID_PARAMETER
        assert caught.value.argument == "BaseAddress" and f"{bad:#x}" in str(caught.value)
        assert adapter.footprint() == before
        box.append(Outcome.REFUSED)
    with campaign.case("MmUnmapLockedPages") as box, pytest.raises(InvalidArgument) as caught:
        adapter.mm.MmUnmapLockedPages(address, other)
    assert caught.value.argument == "MemoryDescriptorList"
    assert adapter.footprint() == before
    box.append(Outcome.REFUSED)
    ctypes.memset(address, 1, 4)  # still mapped after the refusals
    adapter.mm.MmUnmapLockedPages(address, mdl)
    with pytest.raises(InvalidArgument, match="BaseAddress"):  # a second unmap: the address is no longer live
        adapter.mm.MmUnmapLockedPages(address, mdl)


def test_an_empty_mdl_is_refused(adapter: Adapter) -> None:
    before = adapter.footprint()
    with campaign.case(SURFACE) as box, pytest.raises(InvalidArgument) as caught:
        adapter.mm.MmMapLockedPagesSpecifyCache(MDL(np.array([5], dtype=np.uint64), 0))
    assert caught.value.argument == "MemoryDescriptorList" and "ByteCount" in str(caught.value)
    assert adapter.footprint() == before
    box.append(Outcome.REFUSED)


def test_an_mdl_naming_frames_outside_ram_is_refused(adapter: Adapter) -> None:
    before = adapter.footprint()
    beyond = adapter.gpu.system.page_count
    with campaign.case(SURFACE) as box, pytest.raises(InvalidArgument) as caught:
        adapter.mm.MmMapLockedPagesSpecifyCache(MDL(np.array([7, beyond], dtype=np.uint64), 2 * PAGE_SIZE))
    assert caught.value.argument == "MemoryDescriptorList" and "pfns[1]" in str(caught.value)
    assert adapter.footprint() == before
    box.append(Outcome.REFUSED)


def test_a_leaked_mapping_shows_in_the_footprint_and_the_teardown_unmaps_it(adapter: Adapter) -> None:
    start = adapter.footprint()
    mdl = _scattered(adapter, 1, 0, PAGE_SIZE)
    address = adapter.mm.MmMapLockedPagesSpecifyCache(mdl)
    assert "host_views: 1 now, 0 at the start" in adapter.footprint().leaks(start)
    report = adapter.mm.locked_views.release_all()
    assert len(report) == 1 and f"{address:#x}" in report[0] and "never unmapped" in report[0]
    assert adapter.footprint().host_views == 0
    with pytest.raises(InvalidArgument):
        adapter.mm.MmUnmapLockedPages(address, mdl)


def test_without_memory_files_the_map_is_refused_as_unsupported(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.delattr(os, "memfd_create")
    adapter = Adapter()
    mdl = adapter.mm.allocate_pages_for_mdl(PAGE_SIZE)
    with pytest.raises(DdiError) as caught:
        adapter.mm.MmMapLockedPagesSpecifyCache(mdl)
    assert caught.value.status == NTSTATUS.STATUS_NOT_SUPPORTED and "memory file" in str(caught.value)
    assert adapter.footprint().host_views == 0
