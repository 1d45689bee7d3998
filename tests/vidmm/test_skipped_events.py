"""The stream's and the engine's events that no one would see are counted, not built (decision 0203, through
``EventLog.skips``): a log that keeps nothing and has no listener counts the same events, to the same latest time,
as one whose listener sees every event -- and that listener sees what a kept log keeps."""

from __future__ import annotations

from wddmsim.core.events import Event
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.flags import DXGK_TRANSFERFLAGS
from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_TRANSFER
from wddmsim.ddi.paging import DXGK_TRANSFER_LOCATION as Loc
from wddmsim.scenarios.rig import PagingRig

LOCAL = 2


def _run(mode: str) -> tuple[int, int, list[str]]:
    rig = PagingRig()
    events = rig.adapter.events
    seen: list[Event] = []
    before = events.emitted
    if mode != "kept":
        events.stop_keeping()
    if mode == "listened":
        events.subscribe(seen.append)
    mdl = rig.backing(2 * PAGE_SIZE)
    for page in range(2):
        rig.execute(
            DXGK_BUILDPAGINGBUFFER_TRANSFER(
                TransferSize=PAGE_SIZE,
                TransferOffset=page * PAGE_SIZE,
                Source=Loc.segment(LOCAL, rig.segment_address(LOCAL, 0)),
                Destination=Loc.mdl(mdl),
                Flags=DXGK_TRANSFERFLAGS(TransferStart=True, TransferEnd=True),
                MdlOffset=page,
            )
        )
    if mode == "kept":
        seen = list(events)[before:]
    return events.emitted - before, events.latest, [type(e).__name__ for e in seen]


def test_skipped_events_are_counted_as_the_ones_built() -> None:
    kept, listened, unseen = _run("kept"), _run("listened"), _run("nobody")
    assert kept == listened
    assert unseen[:2] == listened[:2]
    assert unseen[2] == []
    names = listened[2]
    for kind in ("BuildPagingBuffer", "PagingOperation", "PagingBufferSubmitted", "DmaBufferStarted"):
        assert names.count(kind) == 2, kind
    assert names.count("PacketExecuted") == 4, "a COPY and a SYNC per transfer"
    assert listened[0] == len(names)
