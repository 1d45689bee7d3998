"""pfnSetPriorityCb: eviction priorities, what the default policy (priority, then least recently used) ranks by."""

from __future__ import annotations

import pytest

from wddmsim.ddi.allocation import (
    D3DDDI_ALLOCATIONPRIORITY_HIGH,
    D3DDDI_ALLOCATIONPRIORITY_LOW,
    D3DDDICB_SETPRIORITY,
)
from wddmsim.ddi.status import HRESULT, DdiError

from .desk import Desk, KiB


@pytest.mark.any_driver
@pytest.mark.parametrize(("policy", "kept"), [("priority-lru", "precious"), ("lru", "cheap")])
def test_the_lower_priority_allocation_is_the_victim_even_though_it_was_used_last(policy: str, kept: str) -> None:
    desk = Desk(policy=policy)
    desk.crowd(desk.cpu_segment)  # the CPU-visible segment holds other work: the newcomer must go to the local one
    _, device, queue = desk.other()
    size = (desk.vidmm.spaces.get(desk.local_segment).size // 3) // (64 * KiB) * (64 * KiB)
    precious, cheap = desk.buffer(size, usage=0, device=device), desk.buffer(size, usage=0, device=device)
    args = D3DDDICB_SETPRIORITY(
        NumAllocations=2,
        phAllocationList=(precious, cheap),
        pPriorities=(D3DDDI_ALLOCATIONPRIORITY_HIGH, D3DDDI_ALLOCATIONPRIORITY_LOW),
    )
    assert device.set_priority(args) == HRESULT.S_OK
    filler = desk.buffer(size, usage=0, device=device)  # the segment is full
    desk.resident(precious, device=device, queue=queue)
    desk.resident(cheap, device=device, queue=queue)  # used after precious: least recently used would spare it
    desk.resident(filler, device=device, queue=queue)
    desk.evict(precious, cheap, device=device, EvictOnlyIfNecessary=True)
    newcomer = desk.buffer(size, usage=0)  # room for one of them
    desk.resident(newcomer)
    stayed = {name for name, h in (("precious", precious), ("cheap", cheap)) if desk.where(h) == desk.local_segment}
    assert stayed == {kept}, "priority first; lru looks at recency only"
    desk.check()


@pytest.mark.any_driver
def test_bad_priority_calls_are_refused_and_change_nothing() -> None:
    desk = Desk()
    h = desk.buffer(64 * KiB)
    _, other, _ = desk.other()
    foreign = desk.buffer(64 * KiB, device=other)
    before = desk.a(h).priority
    for args, word in (
        (D3DDDICB_SETPRIORITY(NumAllocations=2, phAllocationList=(h,), pPriorities=(1,)), "NumAllocations"),
        (D3DDDICB_SETPRIORITY(NumAllocations=1, phAllocationList=(h,), pPriorities=()), "pPriorities"),
        (D3DDDICB_SETPRIORITY(NumAllocations=1, phAllocationList=(h,), pPriorities=(1 << 32,)), "pPriorities[0]"),
        (D3DDDICB_SETPRIORITY(NumAllocations=1, phAllocationList=(h,), pPriorities=(-1,)), "pPriorities[0]"),
        (D3DDDICB_SETPRIORITY(NumAllocations=1, phAllocationList=(foreign,), pPriorities=(1,)), "phAllocationList[0]"),
    ):
        with pytest.raises(DdiError, match=word.replace("[", r"\[").replace("]", r"\]")) as caught:
            desk.device.set_priority(args)
        assert caught.value.status == HRESULT.E_INVALIDARG
    assert desk.a(h).priority == before
