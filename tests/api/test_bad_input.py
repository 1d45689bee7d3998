# mypy: disable-error-code="arg-type,misc"
# (The table passes ill-typed arguments on purpose, through lambdas with default arguments.)
"""The bad-input table of the runtime callbacks (issue 19, campaign surface ``runtime``).

Every ``UserDevice`` / ``UserProcess`` callback is called with each argument at its boundaries -- 0, -1, unaligned by
one, 2**32, 2**64 - 1, base + size overflowing, None and wrong types, another process's handles, stale handles of
destroyed objects, calls on a destroyed device or an exited process, double destroys -- on both driver models.  Each
case must be refused with the documented status and the argument named, and leave the adapter exactly as it was:
the same :meth:`Adapter.footprint`, and no invariant broken (``check_residency``, ``check_locks``, the page tables
of every context).  Valid calls at the same boundaries are carried out.  Every case is counted in the campaign tally.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import pytest

from wddmsim.api import UserDevice
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.allocation import D3DDDI_ALLOCATIONINFO, D3DDDICB_ALLOCATE, D3DDDICB_DEALLOCATE, D3DDDICB_SETPRIORITY
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.lock import (
    D3DDDICB_LOCK,
    D3DDDICB_LOCK2,
    D3DDDICB_LOCK2FLAGS,
    D3DDDICB_LOCKFLAGS,
    D3DDDICB_UNLOCK,
    D3DDDICB_UNLOCK2,
)
from wddmsim.ddi.render import D3DDDI_ALLOCATIONLIST, D3DDDICB_RENDER
from wddmsim.ddi.residency import (
    D3DDDI_CREATEPAGINGQUEUE,
    D3DDDI_EVICT_FLAGS,
    D3DDDI_MAKERESIDENT,
    D3DDDI_MAKERESIDENT_FLAGS,
    D3DDDI_OFFER_PRIORITY,
    D3DDDI_TRIMRESIDENCYSET_FLAGS,
    D3DDDIARG_TRIMRESIDENCYSET,
    D3DDDICB_EVICT,
    D3DKMT_OFFER_FLAGS,
    D3DKMT_OFFERALLOCATIONS,
    D3DKMT_QUERYVIDEOMEMORYINFO,
    D3DKMT_RECLAIMALLOCATIONS2,
)
from wddmsim.ddi.status import HRESULT, DdiError, InvalidArgument
from wddmsim.ddi.va import D3DDDI_MAPGPUVIRTUALADDRESS, D3DDDI_RESERVEGPUVIRTUALADDRESS, D3DDDICB_FREEGPUVIRTUALADDRESS
from wddmsim.drivers.reference import reference_driver
from wddmsim.hw import commands as cmd
from wddmsim.kmd.allocations import AllocationDesc, ResourceKind
from wddmsim.kmd.config import DriverModel
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome
from wddmsim.testing.invariants import MemoryRanges, check_page_tables
from wddmsim.testing.residency import check_locks, check_residency

from .desk import CPU, Desk, KiB

SURFACE = "runtime"
U64_MAX = (1 << 64) - 1
VA_64K = 64 * KiB
BAD_INTS: list[object] = [-1, 1 << 64, None, "1", 1.5]
"""Values no C integer argument takes."""


class World:
    """A desk with everything a bad call could name: our objects, another process's, destroyed ones, a destroyed
    device and a device of an exited process."""

    def __init__(self, model: DriverModel) -> None:
        d = self.desk = Desk(model=model)
        self.wddm1 = d.wddm1
        self.device, self.process, self.queue = d.device, d.process, d.queue
        self.buf = d.buffer(64 * KiB)
        self.spare = d.buffer(64 * KiB)
        self.hidden = d.buffer(64 * KiB, usage=0)
        d.resident(self.buf)
        self.context = d.device.create_context()
        self.sync = d.device.create_sync_object()
        self.other, self.odevice, self.oqueue = d.other()
        self.obuf = d.buffer(64 * KiB, device=self.odevice)
        self.ocontext = self.odevice.create_context()
        self.osync = self.odevice.create_sync_object()
        # Stale handles: created, then destroyed.
        self.sbuf = d.buffer(64 * KiB)
        d.device.deallocate(D3DDDICB_DEALLOCATE(NumAllocations=1, HandleList=(self.sbuf,)))
        self.squeue = d.new_queue(d.device)
        d.device.destroy_paging_queue(self.squeue)
        self.scontext = d.device.create_context()
        d.device.destroy_context(self.scontext)
        self.ssync = d.device.create_sync_object()
        d.device.destroy_sync_object(self.ssync)
        self.dead = d.process.create_device()
        d.process.destroy_device(self.dead)
        self.gone = d.adapter.runtime.open_process()
        self.gone_device = self.gone.create_device()
        self.gone.close()
        d.settle()

    def handles(self, mine: HANDLE, foreign: HANDLE, stale: HANDLE) -> list[tuple[str, object]]:
        """A handle argument's bad values (``mine`` is a valid handle of another kind, e.g. a queue for an
        allocation)."""
        return [
            ("0", 0),
            ("-1", -1),
            ("unaligned", int(mine) + 1),
            ("2^32", 1 << 32),
            ("2^64-1", U64_MAX),
            ("None", None),
            ("str", "0x1"),
            ("foreign", foreign),
            ("stale", stale),
        ]

    def check(self) -> list[str]:
        """Every invariant checker's complaints."""
        adapter = self.desk.adapter
        problems = check_residency(adapter) + check_locks(adapter)
        ranges = MemoryRanges.of(adapter.driver)
        for root, entries in reference_driver(adapter.driver).context_roots.values():
            problems += check_page_tables(adapter.gpu, root, ranges, root_entries=entries)
        return problems


@dataclass(frozen=True)
class Case:
    callback: str
    label: str
    call: Callable[[World], object]
    argument: str | None
    """The argument the refusal must name (None: a refusal that names none, e.g. a call the model lacks)."""
    status: HRESULT = HRESULT.E_INVALIDARG
    handle: bool = False
    """A handle argument: the runtime checks it before anything else, on either model."""


def _refused(w: World, case: Case) -> list[Outcome]:
    """Run a bad case; its outcome (and the test's complaint, if any) -- REFUSED only if the documented status,
    the named argument, an unchanged footprint and no broken invariant."""
    before = w.desk.adapter.footprint()
    try:
        result = case.call(w)
    except InvalidArgument as error:
        named = error.argument == case.argument or (
            case.argument is not None and error.argument.startswith(case.argument)
        )
        outcome = Outcome.REFUSED if error.status == case.status and named else Outcome.MISMATCHED
        if outcome is Outcome.MISMATCHED:
            print(f"{case.callback}/{case.label}: {error} (wanted {case.argument} {case.status.name})")
    except DdiError as error:
        outcome = Outcome.REFUSED if case.argument is None and error.status == case.status else Outcome.MISMATCHED
        if outcome is Outcome.MISMATCHED:
            print(f"{case.callback}/{case.label}: {error} (wanted {case.argument} {case.status.name})")
    except Exception as error:  # anything else is a Python error escaping a callback
        print(f"{case.callback}/{case.label}: CRASHED {type(error).__name__}: {error}")
        outcome = Outcome.CRASHED
    else:
        print(f"{case.callback}/{case.label}: accepted ({result!r})")
        outcome = Outcome.ACCEPTED_WRONGLY
    w.desk.settle()
    after = w.desk.adapter.footprint()
    if after != before:
        print(f"{case.callback}/{case.label}: footprint {before} -> {after}")
        outcome = Outcome.LEAKED if outcome is Outcome.REFUSED else outcome
    problems = w.check()
    if problems:
        print(f"{case.callback}/{case.label}: " + "; ".join(problems))
        outcome = Outcome.MISMATCHED if outcome is Outcome.REFUSED else outcome
    return [outcome]


# --- the table ------------------------------------------------------------------------------------------------


def _alloc_args(data: bytes | None = None, **fields: Any) -> D3DDDICB_ALLOCATE:
    data = AllocationDesc(ResourceKind.BUFFER, size=64 * KiB, usage=CPU).encode() if data is None else data
    info = D3DDDI_ALLOCATIONINFO(pPrivateDriverData=data, PrivateDriverDataSize=len(data))
    return D3DDDICB_ALLOCATE(**{"NumAllocations": 1, "pAllocationInfo": [info], **fields})


def _make_resident(w: World, **fields: Any) -> object:
    args: dict[str, Any] = {"hPagingQueue": w.queue, "NumAllocations": 1, "AllocationList": (w.buf,)}
    return w.device.make_resident(D3DDDI_MAKERESIDENT(**{**args, **fields}))


def _evict(w: World, **fields: Any) -> object:
    args: dict[str, Any] = {"NumAllocations": 1, "AllocationList": (w.spare,)}
    return w.device.evict(D3DDDICB_EVICT(**{**args, **fields}))


def _offer(w: World, **fields: Any) -> object:
    args: dict[str, Any] = {
        "hDevice": w.device.handle,
        "HandleList": (w.spare,),
        "NumAllocations": 1,
        "Priority": D3DDDI_OFFER_PRIORITY.D3DDDI_OFFER_PRIORITY_LOW,
    }
    return w.device.offer(D3DKMT_OFFERALLOCATIONS(**{**args, **fields}))


def _lock(w: World, **fields: Any) -> object:
    args: dict[str, Any] = {"hAllocation": w.spare, "Flags": D3DDDICB_LOCKFLAGS(LockEntire=True)}
    return w.device.lock(D3DDDICB_LOCK(**{**args, **fields}))


def _handle_cases(
    callback: str, argument: str, call: Callable[[World, object], object], pick: Callable[[World], tuple[Any, Any, Any]]
) -> list[Case]:
    """The bad values of one handle argument: ``pick`` gives (a valid handle of another kind, another process's
    handle, a stale handle)."""
    labels = ["0", "-1", "unaligned", "2^32", "2^64-1", "None", "str", "foreign", "stale"]
    return [
        Case(
            callback,
            f"{argument}={label}",
            lambda w, i=i: call(w, w.handles(*pick(w))[i][1]),
            argument,
            handle=True,
        )
        for i, label in enumerate(labels)
    ]


def _int_cases(callback: str, argument: str, call: Callable[[World, object], object]) -> list[Case]:
    return [Case(callback, f"{argument}={value!r}", lambda w, v=value: call(w, v), argument) for value in BAD_INTS]


def _allocation(w: World) -> tuple[Any, Any, Any]:
    return w.queue, w.obuf, w.sbuf


def _queue(w: World) -> tuple[Any, Any, Any]:
    return w.buf, w.oqueue, w.squeue


def _context(w: World) -> tuple[Any, Any, Any]:
    return w.buf, w.ocontext, w.scontext


def _sync(w: World) -> tuple[Any, Any, Any]:
    return w.buf, w.osync, w.ssync


def _cases() -> list[Case]:
    cases: list[Case] = []
    add = cases.extend
    # pfnAllocateCb
    add(
        [
            Case(
                "allocate",
                "NumAllocations=0",
                lambda w: w.device.allocate(_alloc_args(NumAllocations=0)),
                "NumAllocations",
            ),
            Case(
                "allocate",
                "NumAllocations=2",
                lambda w: w.device.allocate(_alloc_args(NumAllocations=2)),
                "NumAllocations",
            ),
            Case(
                "allocate",
                "NumAllocations=None",
                lambda w: w.device.allocate(_alloc_args(NumAllocations=None)),
                "NumAllocations",
            ),
            Case(
                "allocate",
                "pAllocationInfo=None",
                lambda w: w.device.allocate(_alloc_args(pAllocationInfo=None)),
                "pAllocationInfo",
            ),
            Case(
                "allocate",
                "pAllocationInfo=[None]",
                lambda w: w.device.allocate(_alloc_args(pAllocationInfo=[None])),
                "pAllocationInfo[0]",
            ),
            Case("allocate", "private data empty", lambda w: w.device.allocate(_alloc_args(b"")), "pPrivateDriverData"),
            Case(
                "allocate",
                "private data garbage",
                lambda w: w.device.allocate(_alloc_args(bytes(36))),
                "pPrivateDriverData",
            ),
            Case(
                "allocate",
                "size 0",
                lambda w: w.device.allocate(_alloc_args(AllocationDesc(ResourceKind.BUFFER, size=0).encode())),
                "pPrivateDriverData.size",
            ),
            Case(
                "allocate",
                "size 2^62",
                lambda w: w.device.allocate(_alloc_args(AllocationDesc(ResourceKind.BUFFER, size=1 << 62).encode())),
                None,
                HRESULT.E_OUTOFMEMORY,
            ),
            Case(
                "allocate",
                "PrivateDriverDataSize",
                lambda w: w.device.allocate(_alloc_args(PrivateDriverDataSize=4)),
                "PrivateDriverDataSize",
            ),
            Case("allocate", "args=None", lambda w: w.device.allocate(None), "pData"),
        ]
    )
    # pfnDeallocateCb
    add(
        _handle_cases(
            "deallocate",
            "HandleList[0]",
            lambda w, h: w.device.deallocate(D3DDDICB_DEALLOCATE(NumAllocations=1, HandleList=(h,))),
            _allocation,
        )
    )
    add(
        [
            Case(
                "deallocate",
                "NumAllocations=0",
                lambda w: w.device.deallocate(D3DDDICB_DEALLOCATE(NumAllocations=0)),
                "NumAllocations",
            ),
            Case(
                "deallocate",
                "NumAllocations=-1",
                lambda w: w.device.deallocate(D3DDDICB_DEALLOCATE(NumAllocations=-1, HandleList=(w.spare,))),
                "NumAllocations",
            ),
            Case(
                "deallocate",
                "HandleList=None",
                lambda w: w.device.deallocate(D3DDDICB_DEALLOCATE(NumAllocations=1, HandleList=None)),
                "HandleList",
            ),
            Case(
                "deallocate",
                "twice in a list",
                lambda w: w.device.deallocate(D3DDDICB_DEALLOCATE(NumAllocations=2, HandleList=(w.spare, w.spare))),
                "HandleList",
            ),
        ]
    )
    # pfnSetPriorityCb
    add(
        _handle_cases(
            "set_priority",
            "phAllocationList[0]",
            lambda w, h: w.device.set_priority(
                D3DDDICB_SETPRIORITY(NumAllocations=1, phAllocationList=(h,), pPriorities=(1,))
            ),
            _allocation,
        )
    )
    add(
        _int_cases(
            "set_priority",
            "pPriorities[0]",
            lambda w, v: w.device.set_priority(
                D3DDDICB_SETPRIORITY(NumAllocations=1, phAllocationList=(w.buf,), pPriorities=(v,))
            ),
        )
    )
    add(
        [
            Case(
                "set_priority",
                "2^32",
                lambda w: w.device.set_priority(
                    D3DDDICB_SETPRIORITY(NumAllocations=1, phAllocationList=(w.buf,), pPriorities=(1 << 32,))
                ),
                "pPriorities[0]",
            )
        ]
    )
    add(
        [
            Case(
                "set_priority",
                "phAllocationList=None",
                lambda w: w.device.set_priority(
                    D3DDDICB_SETPRIORITY(NumAllocations=1, phAllocationList=None, pPriorities=(1,))
                ),
                "phAllocationList",
            )
        ]
    )
    # pfnCreatePagingQueueCb / pfnDestroyPagingQueueCb
    add(
        [
            Case(
                "create_paging_queue",
                f"Priority={p!r}",
                lambda w, p=p: w.device.create_paging_queue(D3DDDI_CREATEPAGINGQUEUE(Priority=p)),
                "Priority",
            )
            for p in (2, -2, None, "0", 0.0, 1 << 32)
        ]
    )
    add(
        _int_cases(
            "create_paging_queue",
            "PhysicalAdapterIndex",
            lambda w, v: w.device.create_paging_queue(D3DDDI_CREATEPAGINGQUEUE(PhysicalAdapterIndex=v)),
        )
    )
    add(
        [
            Case(
                "create_paging_queue",
                "PhysicalAdapterIndex=1",
                lambda w: w.device.create_paging_queue(D3DDDI_CREATEPAGINGQUEUE(PhysicalAdapterIndex=1)),
                "PhysicalAdapterIndex",
            )
        ]
    )
    add(
        [
            Case(
                "create_paging_queue",
                "hDevice=foreign",
                lambda w: w.device.create_paging_queue(D3DDDI_CREATEPAGINGQUEUE(hDevice=w.odevice.handle)),
                "hDevice",
            )
        ]
    )
    add(_handle_cases("destroy_paging_queue", "hPagingQueue", lambda w, h: w.device.destroy_paging_queue(h), _queue))
    # pfnMakeResidentCb
    add(_handle_cases("make_resident", "hPagingQueue", lambda w, h: _make_resident(w, hPagingQueue=h), _queue))
    add(
        _handle_cases(
            "make_resident", "AllocationList[0]", lambda w, h: _make_resident(w, AllocationList=(h,)), _allocation
        )
    )
    add(
        [
            Case(
                "make_resident",
                "NumAllocations=0",
                lambda w: _make_resident(w, NumAllocations=0, AllocationList=()),
                "NumAllocations",
            ),
            Case("make_resident", "NumAllocations=2", lambda w: _make_resident(w, NumAllocations=2), "NumAllocations"),
            Case(
                "make_resident",
                "NumAllocations=None",
                lambda w: _make_resident(w, NumAllocations=None),
                "NumAllocations",
            ),
            Case(
                "make_resident",
                "AllocationList=None",
                lambda w: _make_resident(w, AllocationList=None),
                "AllocationList",
            ),
            Case(
                "make_resident",
                "Flags.Reserved",
                lambda w: _make_resident(w, Flags=D3DDDI_MAKERESIDENT_FLAGS(Reserved=1)),
                "Flags.Reserved",
            ),
            Case(
                "make_resident",
                "MustSucceed alone",
                lambda w: _make_resident(w, Flags=D3DDDI_MAKERESIDENT_FLAGS(MustSucceed=True)),
                "Flags.MustSucceed",
            ),
            Case("make_resident", "PriorityList short", lambda w: _make_resident(w, PriorityList=()), "PriorityList"),
            Case(
                "make_resident", "PriorityList long", lambda w: _make_resident(w, PriorityList=(1, 2)), "PriorityList"
            ),
            Case(
                "make_resident", "PriorityList -1", lambda w: _make_resident(w, PriorityList=(-1,)), "PriorityList[0]"
            ),
            Case(
                "make_resident",
                "PriorityList None entry",
                lambda w: _make_resident(w, PriorityList=(None,)),
                "PriorityList[0]",
            ),
            Case("make_resident", "Flags=None", lambda w: _make_resident(w, Flags=None), "Flags"),
        ]
    )
    # pfnEvictCb
    add(_handle_cases("evict", "AllocationList[0]", lambda w, h: _evict(w, AllocationList=(h,)), _allocation))
    add(
        [
            Case("evict", "empty", lambda w: _evict(w, NumAllocations=0, AllocationList=()), "NumAllocations"),
            Case("evict", "NumAllocations=2", lambda w: _evict(w, NumAllocations=2), "NumAllocations"),
            Case("evict", "NumAllocations=None", lambda w: _evict(w, NumAllocations=None), "NumAllocations"),
            Case("evict", "AllocationList=None", lambda w: _evict(w, AllocationList=None), "AllocationList"),
            Case(
                "evict",
                "Flags.Reserved",
                lambda w: _evict(w, AllocationList=(w.buf,), Flags=D3DDDI_EVICT_FLAGS(Reserved=4)),
                "Flags.Reserved",
            ),
            Case("evict", "not resident", lambda w: _evict(w), "AllocationList[0]"),
            Case("evict", "hDevice=foreign", lambda w: _evict(w, hDevice=w.odevice.handle), "hDevice"),
        ]
    )
    # Paging-fence waits
    add(
        _handle_cases(
            "wait_for_paging_fence", "hPagingQueue", lambda w, h: w.device.wait_for_paging_fence(h, 0), _queue
        )
    )
    add(_int_cases("wait_for_paging_fence", "FenceValue", lambda w, v: w.device.wait_for_paging_fence(w.queue, v)))
    add(
        [
            Case(
                "wait_for_paging_fence",
                "never issued",
                lambda w: w.device.wait_for_paging_fence(w.queue, U64_MAX),
                "FenceValue",
            )
        ]
    )
    add(_handle_cases("paging_fence_value", "hPagingQueue", lambda w, h: w.device.paging_fence_value(h), _queue))
    # pfnTrimResidencySet
    trim = D3DDDI_TRIMRESIDENCYSET_FLAGS
    add(
        [
            Case(
                "trim_residency_set",
                "TrimFlags.Reserved",
                lambda w: w.device.trim_residency_set(D3DDDIARG_TRIMRESIDENCYSET(TrimFlags=trim(Reserved=1))),
                "TrimFlags.Reserved",
            ),
            Case(
                "trim_residency_set",
                "Periodic+Restart",
                lambda w: w.device.trim_residency_set(
                    D3DDDIARG_TRIMRESIDENCYSET(TrimFlags=trim(PeriodicTrim=True, RestartPeriodicTrim=True))
                ),
                "TrimFlags",
            ),
            Case(
                "trim_residency_set",
                "TrimFlags=None",
                lambda w: w.device.trim_residency_set(D3DDDIARG_TRIMRESIDENCYSET(TrimFlags=None)),
                "TrimFlags",
            ),
            Case("trim_residency_set", "args=None", lambda w: w.device.trim_residency_set(None), "pData"),
        ]
    )
    add(
        _int_cases(
            "trim_residency_set",
            "NumBytesToTrim",
            lambda w, v: w.device.trim_residency_set(
                D3DDDIARG_TRIMRESIDENCYSET(TrimFlags=trim(TrimToBudget=True), NumBytesToTrim=v)
            ),
        )
    )
    # pfnOfferAllocationsCb / pfnReclaimAllocations2Cb
    add(_handle_cases("offer", "HandleList[0]", lambda w, h: _offer(w, HandleList=(h,)), _allocation))
    add(
        [
            Case("offer", f"Priority={p!r}", lambda w, p=p: _offer(w, Priority=p), "Priority")
            for p in (0, 5, -1, None, "1")
        ]
        + [
            Case(
                "offer", "Flags.Reserved", lambda w: _offer(w, Flags=D3DKMT_OFFER_FLAGS(Reserved=1)), "Flags.Reserved"
            ),
            Case(
                "offer",
                "twice in a list",
                lambda w: _offer(w, HandleList=(w.spare, w.spare), NumAllocations=2),
                "HandleList[1]",
            ),
            Case("offer", "NumAllocations=2", lambda w: _offer(w, NumAllocations=2), "NumAllocations"),
            Case("offer", "empty", lambda w: _offer(w, HandleList=(), NumAllocations=0), "NumAllocations"),
            Case("offer", "HandleList=None", lambda w: _offer(w, HandleList=None), "HandleList"),
            Case("offer", "hDevice=foreign", lambda w: _offer(w, hDevice=w.odevice.handle), "hDevice"),
        ]
    )
    add(
        _handle_cases(
            "reclaim",
            "HandleList[0]",
            lambda w, h: w.device.reclaim(
                D3DKMT_RECLAIMALLOCATIONS2(hPagingQueue=w.queue, NumAllocations=1, HandleList=(h,))
            ),
            _allocation,
        )
    )
    add(
        _handle_cases(
            "reclaim",
            "hPagingQueue",
            lambda w, h: w.device.reclaim(
                D3DKMT_RECLAIMALLOCATIONS2(hPagingQueue=h, NumAllocations=1, HandleList=(w.spare,))
            ),
            _queue,
        )
    )
    add(
        [
            Case(
                "reclaim",
                "not offered",
                lambda w: w.device.reclaim(
                    D3DKMT_RECLAIMALLOCATIONS2(hPagingQueue=w.queue, NumAllocations=1, HandleList=(w.spare,))
                ),
                "HandleList[0]",
            ),
            Case(
                "reclaim",
                "NumAllocations=0",
                lambda w: w.device.reclaim(
                    D3DKMT_RECLAIMALLOCATIONS2(hPagingQueue=w.queue, NumAllocations=0, HandleList=())
                ),
                "NumAllocations",
            ),
            Case(
                "reclaim",
                "HandleList=None",
                lambda w: w.device.reclaim(
                    D3DKMT_RECLAIMALLOCATIONS2(hPagingQueue=w.queue, NumAllocations=1, HandleList=None)
                ),
                "HandleList",
            ),
        ]
    )
    # pfnLockCb / pfnUnlockCb
    add(_handle_cases("lock", "hAllocation", lambda w, h: _lock(w, hAllocation=h), _allocation))
    add(_int_cases("lock", "PrivateDriverData", lambda w, v: _lock(w, PrivateDriverData=v)))
    add(_int_cases("lock", "NumPages", lambda w, v: _lock(w, NumPages=v, Flags=D3DDDICB_LOCKFLAGS())))
    add(
        [
            Case("lock", "PrivateDriverData=2^32", lambda w: _lock(w, PrivateDriverData=1 << 32), "PrivateDriverData"),
            Case(
                "lock",
                "Flags.Reserved",
                lambda w: _lock(w, Flags=D3DDDICB_LOCKFLAGS(LockEntire=True, Reserved=1)),
                "Flags.Reserved",
            ),
            Case(
                "lock",
                "ReadOnly+WriteOnly",
                lambda w: _lock(w, Flags=D3DDDICB_LOCKFLAGS(LockEntire=True, ReadOnly=True, WriteOnly=True)),
                "Flags",
            ),
            Case(
                "lock",
                "no range",
                lambda w: _lock(w, Flags=D3DDDICB_LOCKFLAGS()),
                "Flags.LockEntire",
                HRESULT.D3DERR_NOTAVAILABLE,
            ),
            Case(
                "lock",
                "page 16 of 16",
                lambda w: _lock(w, Flags=D3DDDICB_LOCKFLAGS(), NumPages=1, pPages=(16,)),
                "pPages[0]",
            ),
            Case(
                "lock", "page -1", lambda w: _lock(w, Flags=D3DDDICB_LOCKFLAGS(), NumPages=1, pPages=(-1,)), "pPages[0]"
            ),
            Case(
                "lock",
                "page None",
                lambda w: _lock(w, Flags=D3DDDICB_LOCKFLAGS(), NumPages=1, pPages=(None,)),
                "pPages[0]",
            ),
            Case(
                "lock",
                "NumPages=2 of 1",
                lambda w: _lock(w, Flags=D3DDDICB_LOCKFLAGS(), NumPages=2, pPages=(0,)),
                "NumPages",
            ),
            Case(
                "lock", "pPages=str", lambda w: _lock(w, Flags=D3DDDICB_LOCKFLAGS(), NumPages=1, pPages="0"), "pPages"
            ),
            Case("lock", "GpuVirtualAddress", lambda w: _lock(w, GpuVirtualAddress=PAGE_SIZE), "GpuVirtualAddress"),
            Case("lock", "not CPU-visible", lambda w: _lock(w, hAllocation=w.hidden), "hAllocation"),
            Case("lock", "Flags=None", lambda w: _lock(w, Flags=None), "Flags"),
        ]
    )
    add(
        _handle_cases(
            "unlock",
            "phAllocations[0]",
            lambda w, h: w.device.unlock(D3DDDICB_UNLOCK(NumAllocations=1, phAllocations=(h,))),
            _allocation,
        )
    )
    add(
        [
            Case(
                "unlock",
                "not locked",
                lambda w: w.device.unlock(D3DDDICB_UNLOCK(NumAllocations=1, phAllocations=(w.spare,))),
                "phAllocations[0]",
            ),
            Case(
                "unlock",
                "NumAllocations=2",
                lambda w: w.device.unlock(D3DDDICB_UNLOCK(NumAllocations=2, phAllocations=(w.spare,))),
                "NumAllocations",
            ),
            Case(
                "unlock",
                "phAllocations=None",
                lambda w: w.device.unlock(D3DDDICB_UNLOCK(NumAllocations=1, phAllocations=None)),
                "phAllocations",
            ),
        ]
    )
    # pfnLock2Cb / pfnUnlock2Cb (WDDM 2.x; refused on WDDM 1.x)
    add(_handle_cases("lock2", "hAllocation", lambda w, h: w.device.lock2(D3DDDICB_LOCK2(hAllocation=h)), _allocation))
    add(
        [
            Case(
                "lock2",
                "Flags.Reserved",
                lambda w: w.device.lock2(D3DDDICB_LOCK2(hAllocation=w.spare, Flags=D3DDDICB_LOCK2FLAGS(Reserved=1))),
                "Flags",
            )
        ]
    )
    add(
        _handle_cases(
            "unlock2", "hAllocation", lambda w, h: w.device.unlock2(D3DDDICB_UNLOCK2(hAllocation=h)), _allocation
        )
    )
    add(
        [
            Case(
                "unlock2",
                "not locked",
                lambda w: w.device.unlock2(D3DDDICB_UNLOCK2(hAllocation=w.spare)),
                "hAllocation",
            )
        ]
    )
    # GPU virtual addresses (WDDM 2.x; refused on WDDM 1.x)
    reserve = D3DDDI_RESERVEGPUVIRTUALADDRESS
    add(
        [
            Case(
                "reserve_gpu_va",
                f"Size={s!r}",
                lambda w, s=s: w.device.reserve_gpu_va(reserve(hPagingQueue=w.queue, Size=s)),
                "Size",
            )
            for s in (0, VA_64K + 1, -1, 1 << 64, None)
        ]
        + [
            Case(
                "reserve_gpu_va",
                "BaseAddress unaligned",
                lambda w: w.device.reserve_gpu_va(reserve(hPagingQueue=w.queue, BaseAddress=VA_64K + 1, Size=VA_64K)),
                "BaseAddress",
            ),
            Case(
                "reserve_gpu_va",
                "base+size overflows",
                lambda w: w.device.reserve_gpu_va(
                    reserve(hPagingQueue=w.queue, BaseAddress=(1 << 64) - VA_64K, Size=2 * VA_64K)
                ),
                "BaseAddress",
            ),
        ]
    )
    add(
        _handle_cases(
            "reserve_gpu_va",
            "hPagingQueue",
            lambda w, h: w.device.reserve_gpu_va(reserve(hPagingQueue=h, Size=VA_64K)),
            _queue,
        )
    )
    mapva = D3DDDI_MAPGPUVIRTUALADDRESS
    add(
        _handle_cases(
            "map_gpu_va",
            "hAllocation",
            lambda w, h: w.device.map_gpu_va(mapva(hPagingQueue=w.queue, hAllocation=h, SizeInPages=1)),
            _allocation,
        )
    )
    add(
        [
            Case(
                "map_gpu_va",
                "SizeInPages=17",
                lambda w: w.device.map_gpu_va(mapva(hPagingQueue=w.queue, hAllocation=w.buf, SizeInPages=17)),
                "OffsetInPages",
            ),
            Case(
                "map_gpu_va",
                "OffsetInPages=2^64-1",
                lambda w: w.device.map_gpu_va(
                    mapva(hPagingQueue=w.queue, hAllocation=w.buf, OffsetInPages=U64_MAX, SizeInPages=1)
                ),
                "OffsetInPages",
            ),
            Case(
                "map_gpu_va",
                "SizeInPages=-1",
                lambda w: w.device.map_gpu_va(mapva(hPagingQueue=w.queue, hAllocation=w.buf, SizeInPages=-1)),
                "SizeInPages",
            ),
        ]
    )
    free = D3DDDICB_FREEGPUVIRTUALADDRESS
    add(
        [
            Case(
                "free_gpu_va",
                "never reserved",
                lambda w: w.device.free_gpu_va(free(BaseAddress=VA_64K, Size=VA_64K)),
                "BaseAddress",
            ),
            Case(
                "free_gpu_va",
                "unaligned",
                lambda w: w.device.free_gpu_va(free(BaseAddress=VA_64K + 1, Size=VA_64K)),
                "BaseAddress",
            ),
            Case(
                "free_gpu_va", "Size=None", lambda w: w.device.free_gpu_va(free(BaseAddress=VA_64K, Size=None)), "Size"
            ),
        ]
    )
    # Contexts, synchronisation objects, work
    add(_int_cases("create_context", "NodeOrdinal", lambda w, v: w.device.create_context(v)))
    add([Case("create_context", "NodeOrdinal=99", lambda w: w.device.create_context(99), "NodeOrdinal")])
    add(_handle_cases("destroy_context", "hContext", lambda w, h: w.device.destroy_context(h), _context))
    add(_handle_cases("destroy_sync_object", "hSyncObject", lambda w, h: w.device.destroy_sync_object(h), _sync))
    add(_handle_cases("signal_from_cpu", "hSyncObject", lambda w, h: w.device.signal_from_cpu(h, 1), _sync))
    add(_int_cases("signal_from_cpu", "Value", lambda w, v: w.device.signal_from_cpu(w.sync, v)))
    add(_handle_cases("wait_for_sync_object", "hSyncObject", lambda w, h: w.device.wait_for_sync_object(h, 0), _sync))
    add(_int_cases("wait_for_sync_object", "FenceValue", lambda w, v: w.device.wait_for_sync_object(w.sync, v)))
    add(
        [
            Case(
                "wait_for_sync_object",
                "never signalled",
                lambda w: w.device.wait_for_sync_object(w.sync, U64_MAX),
                "FenceValue",
            )
        ]
    )
    add(
        _handle_cases(
            "submit_command", "hContext", lambda w, h: w.device.submit_command(h, cmd.encode(cmd.Nop())), _context
        )
    )
    add(
        [
            Case("submit_command", f"commands={c!r}", lambda w, c=c: w.device.submit_command(w.context, c), "commands")
            for c in (None, "nop", 5)
        ]
        + [
            Case(
                "submit_command",
                f"commands={c!r}",
                lambda w, c=c: w.device.submit_command(w.context, c),
                "DmaBufferSize",
            )
            for c in (b"", b"\0", b"\0" * 17)
        ]
    )
    add(_handle_cases("wait_for_context", "hContext", lambda w, h: w.device.wait_for_context(h, 0), _context))
    add(_int_cases("wait_for_context", "fence", lambda w, v: w.device.wait_for_context(w.context, v)))
    add([Case("wait_for_context", "never submitted", lambda w: w.device.wait_for_context(w.context, U64_MAX), "fence")])
    # pfnRenderCb (WDDM 1.x; WDDM 2.x refuses it)
    render = D3DDDICB_RENDER
    nop = cmd.encode(cmd.Nop())
    add(
        _handle_cases(
            "render",
            "hContext",
            lambda w, h: w.device.render(render(hContext=h, pCommandBuffer=nop, CommandLength=len(nop))),
            _context,
        )
    )
    add(
        [
            Case(
                "render",
                "pCommandBuffer=None",
                lambda w: w.device.render(render(hContext=w.context, pCommandBuffer=None, CommandLength=16)),
                "pCommandBuffer",
            ),
            Case(
                "render",
                "CommandLength=-1",
                lambda w: w.device.render(render(hContext=w.context, pCommandBuffer=nop, CommandLength=-1)),
                "CommandLength",
            ),
            Case(
                "render",
                "CommandLength past the buffer",
                lambda w: w.device.render(render(hContext=w.context, pCommandBuffer=nop, CommandLength=len(nop) + 1)),
                "CommandLength",
            ),
            Case(
                "render",
                "foreign allocation",
                lambda w: w.device.render(
                    render(
                        hContext=w.context,
                        pCommandBuffer=nop,
                        CommandLength=len(nop),
                        NumAllocations=1,
                        pAllocationList=(D3DDDI_ALLOCATIONLIST(hAllocation=w.obuf),),
                    )
                ),
                "pAllocationList[0]",
            ),
        ]
    )
    # The process's own calls
    add(_int_cases("cpu_read", "address", lambda w, v: w.process.cpu_read(v, 4)))
    add(_int_cases("cpu_read", "size", lambda w, v: w.process.cpu_read(0x1000, v)))
    add([Case("cpu_read", "address+size overflows", lambda w: w.process.cpu_read(U64_MAX, 2), "size")])
    add(_int_cases("cpu_read_into", "address", lambda w, v: w.process.cpu_read_into(v, bytearray(4))))
    add(
        [
            Case("cpu_read_into", "out=None", lambda w: w.process.cpu_read_into(0x1000, None), "out"),
            Case("cpu_read_into", "out=bytes", lambda w: w.process.cpu_read_into(0x1000, b"1234"), "out"),
            Case(
                "cpu_read_into",
                "out not contiguous",
                lambda w: w.process.cpu_read_into(0x1000, memoryview(bytearray(8))[::2]),
                "out",
            ),
            Case(
                "cpu_read_into",
                "address+len overflows",
                lambda w: w.process.cpu_read_into(U64_MAX, bytearray(2)),
                "out",
            ),
        ]
    )
    add(_int_cases("cpu_read_spans", "address", lambda w, v: w.process.cpu_read_spans(v, 4)))
    add(_int_cases("cpu_read_spans", "size", lambda w, v: w.process.cpu_read_spans(0x1000, v)))
    add([Case("cpu_read_spans", "address+size overflows", lambda w: w.process.cpu_read_spans(U64_MAX, 2), "size")])
    add(_int_cases("cpu_write", "address", lambda w, v: w.process.cpu_write(v, b"x")))
    add(
        [
            Case("cpu_write", "data=None", lambda w: w.process.cpu_write(0x1000, None), "data"),
            Case("cpu_write", "data=str", lambda w: w.process.cpu_write(0x1000, "x"), "data"),
            Case("cpu_write", "address+size overflows", lambda w: w.process.cpu_write(U64_MAX, b"xy"), "data"),
        ]
    )
    query = D3DKMT_QUERYVIDEOMEMORYINFO
    add(
        [
            Case(
                "query_video_memory_info",
                "hProcess=foreign",
                lambda w: w.process.query_video_memory_info(query(hProcess=w.other.handle)),
                "hProcess",
            ),
            Case(
                "query_video_memory_info",
                "PhysicalAdapterIndex=1",
                lambda w: w.process.query_video_memory_info(query(PhysicalAdapterIndex=1)),
                "PhysicalAdapterIndex",
            ),
            Case(
                "query_video_memory_info",
                "MemorySegmentGroup=5",
                lambda w: w.process.query_video_memory_info(query(MemorySegmentGroup=5)),
                "MemorySegmentGroup",
            ),
            Case(
                "query_video_memory_info",
                "MemorySegmentGroup=None",
                lambda w: w.process.query_video_memory_info(query(MemorySegmentGroup=None)),
                "MemorySegmentGroup",
            ),
            Case("query_video_memory_info", "args=None", lambda w: w.process.query_video_memory_info(None), "pData"),
            Case("destroy_device", "foreign", lambda w: w.process.destroy_device(w.odevice), "hDevice"),
            Case("destroy_device", "twice", lambda w: w.process.destroy_device(w.dead), "hDevice"),
            Case("destroy_device", "None", lambda w: w.process.destroy_device(None), "hDevice"),
            Case("close", "twice", lambda w: w.gone.close(), "hProcess"),
            Case("create_device", "exited", lambda w: w.gone.create_device(), "hProcess"),
            Case("cpu_read", "exited", lambda w: w.gone.cpu_read(0x1000, 1), "hProcess"),
        ]
    )
    return cases


def _dead_cases() -> list[Case]:
    """Every callback of a destroyed device (``hDevice``) and of a device of an exited process (``hProcess``)."""
    calls: list[tuple[str, Callable[[World, UserDevice], object]]] = [
        ("allocate", lambda w, d: d.allocate(_alloc_args())),
        ("deallocate", lambda w, d: d.deallocate(D3DDDICB_DEALLOCATE(NumAllocations=1, HandleList=(w.buf,)))),
        ("create_paging_queue", lambda w, d: d.create_paging_queue(D3DDDI_CREATEPAGINGQUEUE())),
        (
            "make_resident",
            lambda w, d: d.make_resident(
                D3DDDI_MAKERESIDENT(hPagingQueue=w.queue, NumAllocations=1, AllocationList=(w.buf,))
            ),
        ),
        ("evict", lambda w, d: d.evict(D3DDDICB_EVICT(NumAllocations=1, AllocationList=(w.buf,)))),
        (
            "trim_residency_set",
            lambda w, d: d.trim_residency_set(
                D3DDDIARG_TRIMRESIDENCYSET(TrimFlags=D3DDDI_TRIMRESIDENCYSET_FLAGS(TrimToBudget=True))
            ),
        ),
        ("create_context", lambda w, d: d.create_context()),
        ("create_sync_object", lambda w, d: d.create_sync_object()),
        ("lock", lambda w, d: d.lock(D3DDDICB_LOCK(hAllocation=w.buf, Flags=D3DDDICB_LOCKFLAGS(LockEntire=True)))),
        ("lock2", lambda w, d: d.lock2(D3DDDICB_LOCK2(hAllocation=w.buf))),
        ("submit_command", lambda w, d: d.submit_command(w.context, cmd.encode(cmd.Nop()))),
        ("wait_for_paging_fence", lambda w, d: d.wait_for_paging_fence(w.queue, 0)),
        ("signal_from_cpu", lambda w, d: d.signal_from_cpu(w.sync, 1)),
        ("free_gpu_va", lambda w, d: d.free_gpu_va(D3DDDICB_FREEGPUVIRTUALADDRESS(BaseAddress=VA_64K, Size=VA_64K))),
    ]
    out = []
    for name, call in calls:
        out.append(Case(name, "destroyed device", lambda w, c=call: c(w, w.dead), "hDevice"))
        out.append(Case(name, "exited process", lambda w, c=call: c(w, w.gone_device), "hProcess"))
    return out


CASES = _cases() + _dead_cases()
GROUPS = sorted({c.callback for c in CASES})
MODELS = [DriverModel.WDDM2, DriverModel.WDDM1]

WDDM2_ONLY = {"lock2", "unlock2", "reserve_gpu_va", "map_gpu_va", "free_gpu_va"}
"""On WDDM 1.x these are refused as a whole (the argument named is the call's, or none)."""


def _for_model(case: Case, model: DriverModel) -> Case:
    """The same bad input as the model refuses it: GPU VA and Lock2 calls do not exist on WDDM 1.x, pfnRenderCb
    does not on WDDM 2.x.  A dead device or process is refused first, on either model; so are Lock2's and
    pfnRenderCb's handles and buffer (the runtime checks them), while a GPU VA call is refused as a whole."""
    if case.label in ("destroyed device", "exited process"):
        return case
    if model == DriverModel.WDDM1 and case.callback in ("reserve_gpu_va", "map_gpu_va", "free_gpu_va"):
        return replace(case, argument=None)
    if model == DriverModel.WDDM1 and case.callback == "lock2" and not case.handle:
        return replace(case, argument="pfnLock2Cb")
    if model == DriverModel.WDDM2 and case.callback == "render" and case.label.startswith("CommandLength"):
        return replace(case, argument="pfnRenderCb")
    return case


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
@pytest.mark.parametrize("group", GROUPS)
def test_every_bad_input_is_refused_and_changes_nothing(model: DriverModel, group: str) -> None:
    w = World(model)
    outcomes: list[Outcome] = []
    for case in (c for c in CASES if c.callback == group):
        with campaign.case(SURFACE) as box:
            box.extend(_refused(w, _for_model(case, model)))
            outcomes.extend(box)
    bad = [o for o in outcomes if o is not Outcome.REFUSED]
    assert not bad, f"{len(bad)} of {len(outcomes)} cases not refused cleanly (printed above)"


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
def test_valid_calls_at_the_boundaries_are_carried_out(model: DriverModel) -> None:
    """The other side of each boundary: a destroy of a live object, then the same destroy again (refused), and
    the teardown of everything (the footprint back to the start)."""
    w = World(model)
    d = w.desk
    start = d.adapter.footprint()
    steps: list[tuple[str, Callable[[], object], Callable[[], object], str]] = []
    h = d.buffer(PAGE_SIZE)
    steps.append(
        (
            "deallocate",
            lambda: w.device.deallocate(D3DDDICB_DEALLOCATE(NumAllocations=1, HandleList=(h,))),
            lambda: w.device.deallocate(D3DDDICB_DEALLOCATE(NumAllocations=1, HandleList=(h,))),
            "HandleList[0]",
        )
    )
    q = d.new_queue(w.device)
    steps.append(
        (
            "destroy_paging_queue",
            lambda: w.device.destroy_paging_queue(q),
            lambda: w.device.destroy_paging_queue(q),
            "hPagingQueue",
        )
    )
    c = w.device.create_context()
    steps.append(
        ("destroy_context", lambda: w.device.destroy_context(c), lambda: w.device.destroy_context(c), "hContext")
    )
    s = w.device.create_sync_object()
    steps.append(
        (
            "destroy_sync_object",
            lambda: w.device.destroy_sync_object(s),
            lambda: w.device.destroy_sync_object(s),
            "hSyncObject",
        )
    )
    extra = w.process.create_device()
    steps.append(
        ("destroy_device", lambda: w.process.destroy_device(extra), lambda: w.process.destroy_device(extra), "hDevice")
    )
    for name, first, again, argument in steps:
        assert first() == HRESULT.S_OK, name
        campaign.record(SURFACE, Outcome.ACCEPTED)
        outcome = _refused(w, Case(name, "double destroy", lambda _w, f=again: f(), argument))[0]
        campaign.record(SURFACE, outcome)
        assert outcome is Outcome.REFUSED, name
    assert d.adapter.footprint().leaks(start) == []
    # Boundaries that are valid: a zero wait, a fence value of 0, an empty-range read, the largest UINT priority.
    assert w.device.wait_for_paging_fence(w.queue, 0) == HRESULT.S_OK
    assert w.device.wait_for_sync_object(w.sync, 0) == HRESULT.S_OK
    assert (
        w.device.set_priority(
            D3DDDICB_SETPRIORITY(NumAllocations=1, phAllocationList=(w.buf,), pPriorities=(0xFFFF_FFFF,))
        )
        == HRESULT.S_OK
    )
    campaign.record(SURFACE, Outcome.ACCEPTED, 3)
    w.other.close()
    w.process.close()
    assert d.adapter.footprint().leaks(d.start) == []
