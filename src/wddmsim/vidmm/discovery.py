"""Adapter discovery: ``DxgkDdiQueryAdapterInfo`` for the driver's capabilities (``DXGKQAITYPE_DRIVERCAPS``) and
its segments (``DXGKQAITYPE_QUERYSEGMENT4``, the documented two-call protocol)."""

from __future__ import annotations

from wddmsim.ddi.caps import DXGK_DRIVERCAPS, DXGK_QUERYADAPTERINFOTYPE
from wddmsim.ddi.driver import DXGKARG_QUERYADAPTERINFO, KernelModeDriver
from wddmsim.ddi.segments import DXGK_QUERYSEGMENTIN4, DXGK_QUERYSEGMENTOUT4, DXGK_SEGMENTDESCRIPTOR4


def query_caps(driver: KernelModeDriver) -> DXGK_DRIVERCAPS:
    """``DXGKQAITYPE_DRIVERCAPS``: what the driver is."""
    args = DXGKARG_QUERYADAPTERINFO(Type=DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_DRIVERCAPS)
    driver.query_adapter_info(args)
    if not isinstance(args.pOutputData, DXGK_DRIVERCAPS):
        raise TypeError("DXGKQAITYPE_DRIVERCAPS must answer a DXGK_DRIVERCAPS")
    return args.pOutputData


def query_segments(driver: KernelModeDriver) -> tuple[list[DXGK_SEGMENTDESCRIPTOR4], int, int, int]:
    """The two-call protocol: first ``NbSegment`` only, then the descriptors; with them ``PagingBufferSize``,
    ``PagingBufferPrivateDataSize`` and ``PagingBufferSegmentId``."""
    kind = DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_QUERYSEGMENT4
    count = DXGK_QUERYSEGMENTOUT4()
    driver.query_adapter_info(DXGKARG_QUERYADAPTERINFO(Type=kind, pInputData=DXGK_QUERYSEGMENTIN4(), pOutputData=count))
    if count.NbSegment <= 0 or count.pSegmentDescriptor is not None:
        raise TypeError("the first QUERYSEGMENT4 call must report NbSegment only")
    out = DXGK_QUERYSEGMENTOUT4(NbSegment=count.NbSegment)
    driver.query_adapter_info(DXGKARG_QUERYADAPTERINFO(Type=kind, pInputData=DXGK_QUERYSEGMENTIN4(), pOutputData=out))
    descriptors = out.pSegmentDescriptor
    if descriptors is None or len(descriptors) != out.NbSegment:
        raise TypeError("the second QUERYSEGMENT4 call must fill NbSegment descriptors")
    return list(descriptors), out.PagingBufferSize, out.PagingBufferPrivateDataSize, out.PagingBufferSegmentId
