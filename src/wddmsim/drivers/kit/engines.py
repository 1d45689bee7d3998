"""``DxgkDdiResetEngine`` for this GPU: one engine per node, reset by the hardware."""

from __future__ import annotations

from wddmsim.ddi.status import NTSTATUS, InvalidArgument
from wddmsim.ddi.submit import DXGKARG_RESETENGINE
from wddmsim.hw.gpu import Gpu


def reset_engine(gpu: Gpu, args: DXGKARG_RESETENGINE) -> NTSTATUS:
    """The node's engine forgets its queued and in-flight work and its fault; ``LastAbortedFenceId`` is the fence
    it faulted on, or the last it completed (nothing after it ran)."""
    if not 0 <= args.NodeOrdinal < len(gpu.engines) or args.EngineOrdinal != 0:
        raise InvalidArgument("NodeOrdinal", args.NodeOrdinal, f"nodes are 0..{len(gpu.engines) - 1}, one engine each")
    engine = gpu.engines[args.NodeOrdinal]
    args.LastAbortedFenceId = engine.fault.fence if engine.fault is not None else engine.completed_fence
    engine.reset()
    return NTSTATUS.STATUS_SUCCESS


__all__ = ["reset_engine"]
