"""Transfer's contract checks in one expression (decision 0213) against the checks one by one they stand beside
(``_check_each``): for a table of payloads -- every well-formed shape and each way a field can be wrong, alone and
two at once -- the same answer, or the same named error with the same text."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from wddmsim.core.units import PAGE_SIZE, MiB
from wddmsim.ddi.flags import DXGK_TRANSFERFLAGS
from wddmsim.ddi.memory import MDL
from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_TRANSFER, DXGK_TRANSFER_LOCATION
from wddmsim.kmd.paging import transfer
from wddmsim.scenarios.rig import PagingRig

LOCAL = 2
Loc = DXGK_TRANSFER_LOCATION
Payload = DXGK_BUILDPAGINGBUFFER_TRANSFER


@pytest.fixture(scope="module")
def rig() -> PagingRig:
    return PagingRig()


def _payloads(rig: PagingRig) -> Iterator[tuple[str, Payload, int]]:
    """(case, payload, MdlOffset) for the table."""
    mdl = MDL(rig.mm.allocate_pages_for_mdl(4 * PAGE_SIZE).pfns.copy(), 4 * PAGE_SIZE)
    shifted = MDL(mdl.pfns.copy(), PAGE_SIZE, ByteOffset=8)
    segment = rig.driver.state.segments.segments[LOCAL - 1]  # type: ignore[attr-defined]
    base = rig.segment_address(LOCAL, 0)
    last = rig.segment_address(LOCAL, segment.size - PAGE_SIZE)
    good = Payload(
        TransferSize=2 * PAGE_SIZE,
        Source=Loc.segment(LOCAL, base),
        Destination=Loc.mdl(mdl),
        Flags=DXGK_TRANSFERFLAGS(TransferStart=True, TransferEnd=True),
    )
    sides = {
        "segment to pages": (Loc.segment(LOCAL, base), Loc.mdl(mdl)),
        "pages to segment": (Loc.mdl(mdl), Loc.segment(LOCAL, base)),
        "segment to segment": (Loc.segment(LOCAL, base), Loc.segment(LOCAL, base + 1 * MiB)),
        "pages to pages": (Loc.mdl(mdl), Loc.mdl(mdl)),
        "no MDL": (Loc.segment(LOCAL, base), Loc(SegmentId=0)),
        "MDL with a byte offset": (Loc.segment(LOCAL, base), Loc.mdl(shifted)),
        "no such segment": (Loc.segment(9, base), Loc.mdl(mdl)),
        "segment 0 of a negative id": (Loc(SegmentId=-1, SegmentAddress=base), Loc.mdl(mdl)),
        "below the segment": (Loc.segment(LOCAL, base - PAGE_SIZE), Loc.mdl(mdl)),
        "past the segment": (Loc.mdl(mdl), Loc.segment(LOCAL, last)),
    }
    changes: dict[str, dict[str, object]] = {
        "as is": {},
        "zero bytes": {"TransferSize": 0},
        "one byte": {"TransferSize": 1},
        "the whole MDL": {"TransferSize": 4 * PAGE_SIZE},
        "past the MDL": {"TransferSize": 4 * PAGE_SIZE + 1},
        "negative size": {"TransferSize": -1},
        "misaligned offset": {"TransferOffset": 8},
        "page offset": {"TransferOffset": PAGE_SIZE},
        "swizzle both ways": {"Flags": DXGK_TRANSFERFLAGS(Swizzle=True, Unswizzle=True)},
        "reserved flag": {"Flags": DXGK_TRANSFERFLAGS(Reserved=1)},
        "unknown allocation": {"hAllocation": 0x7777},
        "unknown allocation, negative size": {"hAllocation": 0x7777, "TransferSize": -1},
        "reserved flag, misaligned": {"Flags": DXGK_TRANSFERFLAGS(Reserved=1), "TransferOffset": 8},
    }
    for side_case, (src, dst) in sides.items():
        for change, fields in changes.items():
            payload = dataclasses.replace(good, Source=src, Destination=dst, **fields)  # type: ignore[arg-type]
            for mdl_offset in (0, 2, 3, -1):
                yield f"{side_case}, {change}, MdlOffset {mdl_offset}", payload, mdl_offset


def _outcome(check: object, rig: PagingRig, payload: Payload, mdl_offset: int) -> object:
    state = rig.driver.state  # type: ignore[attr-defined]
    try:
        return check(state, payload, "Transfer", mdl_offset)  # type: ignore[operator]
    except Exception as error:  # the named error is what is compared
        return (type(error).__name__, str(error), getattr(error, "status", None))


def test_the_one_expression_check_answers_as_the_checks_one_by_one(rig: PagingRig) -> None:
    cases = list(_payloads(rig))
    passed = refused = 0
    for case, payload, mdl_offset in cases:
        quick = _outcome(transfer._check, rig, payload, mdl_offset)
        each = _outcome(transfer._check_each, rig, payload, mdl_offset)
        assert quick == each, case
        if isinstance(each, tuple) and len(each) == 2 and each[0] is None:
            passed += 1
        else:
            refused += 1
            assert isinstance(each, tuple) and isinstance(each[0], str), case
    assert len(cases) == 10 * 13 * 4
    assert passed > 40 and refused > 300  # both answers are well exercised
