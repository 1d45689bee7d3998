"""Drivers that break the ``DxgkDdiBuildPagingBuffer`` contract in one precise way each, a recorder, and eviction
policies that misuse their rights (a veto on every victim, a ranking of nobody).

Each wraps a real driver (normally the reference driver) and delegates everything else to it, so the rest of
the adapter keeps working and only the breach under test differs.

Each is also a driver package (decision 0070): :func:`wrapped` makes one from any package and a wrapper, and
importing this module registers the shipped ones by name (``SystemConfig(driver_package="overrun")``,
``wddmsim run --driver wddmsim.testing.fakes:OVERRUN``).  The library never imports this module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from wddmsim.ddi.driver import (
    KernelModeDriver,
)
from wddmsim.ddi.paging import DXGKARG_BUILDPAGINGBUFFER, Op, PagingPayload
from wddmsim.ddi.status import NTSTATUS
from wddmsim.drivers.package import DriverPackage, SimulatedDriver
from wddmsim.drivers.registry import driver_package, register
from wddmsim.drivers.wrapping import WrappedDriver
from wddmsim.hw.gpu import Gpu
from wddmsim.vidmm.policy.interface import BaseEviction, RoomRequest, VidMmAllocation


class DelegatingDriver(WrappedDriver):
    """Forwards every entry point to ``inner``; subclasses override the one they break."""

    def build_paging_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        """The forced ``CPU_VIRTUAL`` path (no paging buffer) always reaches the real driver, so the paging
        process can be set up; calls with a paging buffer go to :meth:`build_into_buffer`."""
        if args.pDmaBuffer is None:
            return self.inner.build_paging_buffer(args)
        return self.build_into_buffer(args)

    def build_into_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        """The override point of the breach drivers: one call with a paging buffer."""
        return self.inner.build_paging_buffer(args)


class IllegalStatusDriver(DelegatingDriver):
    """Returns ``status`` (not one of the three legal ones) from every BuildPagingBuffer call."""

    def __init__(self, inner: KernelModeDriver, status: int = NTSTATUS.STATUS_INVALID_PARAMETER) -> None:
        super().__init__(inner)
        self.status = status

    def build_into_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        return self.status  # type: ignore[return-value]


class OverrunDriver(DelegatingDriver):
    """Builds correctly, then writes ``extra`` bytes past the end of the paging buffer (past ``DmaSize``)."""

    def __init__(self, inner: KernelModeDriver, extra: int = 8) -> None:
        super().__init__(inner)
        self.extra = extra

    def build_into_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        assert args.pDmaBuffer is not None
        end = args.pDmaBuffer + args.DmaSize
        status = self.inner.build_paging_buffer(args)
        end.bytes(self.extra)[:] = b"\xee" * self.extra
        return status


class RaisingDriver(DelegatingDriver):
    """Raises a Python exception from BuildPagingBuffer (a driver crash)."""

    def build_into_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        raise ZeroDivisionError("driver bug")


class DmaSizeUnchangedDriver(DelegatingDriver):
    """Advances ``pDmaBuffer`` but leaves ``DmaSize`` as it was."""

    def build_into_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        size = args.DmaSize
        status = self.inner.build_paging_buffer(args)
        args.DmaSize = size
        return status


class BusyForeverDriver(DelegatingDriver):
    """Answers ALLOCATION_BUSY to ``operation`` every time, even with AllocationIsIdle set."""

    def __init__(self, inner: KernelModeDriver, operation: Op = Op.DXGK_OPERATION_TRANSFER) -> None:
        super().__init__(inner)
        self.operation = operation
        self.calls = 0

    def build_into_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        if args.Operation == self.operation:
            self.calls += 1
            return NTSTATUS.STATUS_GRAPHICS_ALLOCATION_BUSY
        return self.inner.build_paging_buffer(args)


class SpinningDriver(DelegatingDriver):
    """Writes one NOP and answers INSUFFICIENT_DMA_BUFFER to ``operation`` every time, ``MultipassOffset``
    untouched: progress in bytes, none in the work -- a loop that never ends unless VidMm bounds it."""

    def __init__(self, inner: KernelModeDriver, operation: Op = Op.DXGK_OPERATION_TRANSFER) -> None:
        super().__init__(inner)
        self.operation = operation

    def build_into_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        if args.Operation != self.operation:
            return self.inner.build_paging_buffer(args)
        pointer = args.pDmaBuffer
        if pointer is not None and args.DmaSize >= 16:
            pointer.bytes(16)[:] = bytes(16)  # a NOP packet: opcode 0, length 16 ...
            pointer.bytes(8)[4:8] = (16).to_bytes(4, "little")
            args.pDmaBuffer = pointer + 16
            args.DmaSize -= 16
        return NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER


@dataclass(frozen=True, slots=True)
class CallRecord:
    operation: Op
    multipass_in: int
    multipass_out: int
    status: int
    buffer_address: int
    buffer_offset: int
    dma_size_in: int


@dataclass(slots=True)
class Recording:
    calls: list[CallRecord] = field(default_factory=list)


class RecordingDriver(DelegatingDriver):
    """Delegates, and records what VidMm passed in and what the driver left in every call."""

    def __init__(self, inner: KernelModeDriver) -> None:
        super().__init__(inner)
        self.recording = Recording()

    def build_into_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        assert args.pDmaBuffer is not None
        before = args.MultipassOffset
        pointer = args.pDmaBuffer
        size = args.DmaSize
        status = self.inner.build_paging_buffer(args)
        self.recording.calls.append(
            CallRecord(args.Operation, before, args.MultipassOffset, status, pointer.address, pointer.offset, size)
        )
        return status


class PayloadRecorder(DelegatingDriver):
    """Delegates, and keeps every operation VidMm asked for -- once, on its first pass -- in order, including the
    forced ``CPU_VIRTUAL`` updates of the paging process's tables."""

    def __init__(self, inner: KernelModeDriver) -> None:
        super().__init__(inner)
        self.payloads: list[PagingPayload] = []

    def build_paging_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        if args.MultipassOffset == 0:
            self.payloads.append(args.payload)
        return super().build_paging_buffer(args)


# --- the fakes as driver packages ------------------------------------------------------------------------------

Wrapper = Callable[[SimulatedDriver], SimulatedDriver]


def wrapped(inner: DriverPackage | str, wrapper: Wrapper, *, name: str, description: str) -> DriverPackage:
    """The package ``inner`` with its driver wrapped by ``wrapper``: same configuration, user-mode half and
    capabilities; VidMm sees the wrapper."""
    base = driver_package(inner)

    def create(gpu: Gpu, config: Any) -> SimulatedDriver:
        return wrapper(base.create(gpu, config))

    return DriverPackage(
        name=name,
        description=description,
        config_type=base.config_type,
        default_config=base.default_config,
        configure=base.configure,
        create=create,
        umd=base.umd,
        capabilities=base.capabilities,
    )


def _fake(name: str, wrapper: Wrapper, what: str) -> DriverPackage:
    return register(wrapped("reference", wrapper, name=name, description=f"Test double (wddmsim.testing): {what}"))


ILLEGAL_STATUS: Final = _fake(
    "illegal-status", IllegalStatusDriver, "the reference driver, returning an illegal NTSTATUS from BuildPagingBuffer"
)
OVERRUN: Final = _fake("overrun", OverrunDriver, "the reference driver, writing 8 bytes past DmaSize")
RAISING: Final = _fake("raising", RaisingDriver, "the reference driver, raising from BuildPagingBuffer")
DMA_SIZE_UNCHANGED: Final = _fake(
    "dma-size-unchanged", DmaSizeUnchangedDriver, "the reference driver, advancing pDmaBuffer but not DmaSize"
)
BUSY_FOREVER: Final = _fake(
    "busy-forever", BusyForeverDriver, "the reference driver, answering ALLOCATION_BUSY to every Transfer"
)
SPINNING: Final = _fake(
    "spinning", SpinningDriver, "the reference driver, writing a NOP and INSUFFICIENT_DMA_BUFFER to every Transfer"
)
RECORDING: Final = _fake("recording", RecordingDriver, "the reference driver, recording every BuildPagingBuffer call")
PAYLOAD_RECORDER: Final = _fake(
    "payload-recorder", PayloadRecorder, "the reference driver, keeping every operation VidMm asked for"
)


class VetoEveryVictim(BaseEviction):
    """An eviction policy that uses its right to veto (``may_evict``: TTM's ``eviction_valuable``) on every
    victim: VidMm can make no room."""

    name = "veto-every-victim"

    def may_evict(self, victim: VidMmAllocation, request: RoomRequest) -> bool:
        return False


class RanksNobody(BaseEviction):
    """An eviction policy whose ranking leaves every candidate out: VidMm can make no room."""

    name = "ranks-nobody"

    def order(self, candidates: Sequence[VidMmAllocation]) -> list[VidMmAllocation]:
        return []
