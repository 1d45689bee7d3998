"""The simple driver's other entry points (decision 0075): what it reports, its private-data format, contexts,
DxgkDdiRender/DxgkDdiPatch and their refusals, power."""

from __future__ import annotations

import pytest

from wddmsim.core.errors import ConfigurationError
from wddmsim.core.units import PAGE_SIZE
from wddmsim.ddi.allocation import DXGK_ALLOCATIONINFO, DXGKARG_CREATEALLOCATION
from wddmsim.ddi.base import HANDLE
from wddmsim.ddi.caps import DXGK_DRIVERCAPS, DXGK_QUERYADAPTERINFOTYPE
from wddmsim.ddi.context import DXGKARG_CREATECONTEXT
from wddmsim.ddi.driver import DXGKARG_GETROOTPAGETABLESIZE, DXGKARG_QUERYADAPTERINFO
from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_FILL, DXGK_FILL_DESTINATION
from wddmsim.ddi.power import DEVICE_POWER_STATE, DISPLAY_ADAPTER_HW_ID, POWER_ACTION
from wddmsim.ddi.render import D3DDDI_PATCHLOCATIONLIST, DXGK_ALLOCATIONLIST, DXGKARG_PATCH, DXGKARG_RENDER
from wddmsim.ddi.segments import DXGK_QUERYSEGMENTOUT4
from wddmsim.ddi.status import NTSTATUS, DdiError, InvalidArgument
from wddmsim.drivers.package import DriverModel, DriverSettings
from wddmsim.drivers.reference import REFERENCE
from wddmsim.drivers.resources import ResourceDesc, ResourceKind, ResourceUsage, SurfaceLevel
from wddmsim.drivers.simple import SIMPLE, SimpleDriverConfig, SimpleUmd
from wddmsim.drivers.simple.allocations import FORMAT
from wddmsim.hw import commands as cmd
from wddmsim.hw.addressing import Space, hw_address
from wddmsim.hw.gpu import POWER_LOSS_PATTERN
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome

from .bench import GPU, Bench

SURFACE = "simple driver: other DDIs"
UMD = SimpleUmd()


@pytest.fixture
def bench() -> Bench:
    return Bench()


def create(bench: Bench, *descs: ResourceDesc | bytes) -> list[DXGK_ALLOCATIONINFO]:
    infos = []
    for desc in descs:
        data = desc if isinstance(desc, bytes) else UMD.encode(desc)
        infos.append(DXGK_ALLOCATIONINFO(pPrivateDriverData=data, PrivateDriverDataSize=len(data)))
    bench.driver.create_allocation(DXGKARG_CREATEALLOCATION(NumAllocations=len(infos), pAllocationInfo=infos))
    return infos


# --- what it reports ---------------------------------------------------------------------------------------------


def test_it_reports_a_segment_model_driver_with_three_segments_in_its_own_order(bench: Bench) -> None:
    caps = DXGKARG_QUERYADAPTERINFO(Type=DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_DRIVERCAPS)
    bench.driver.query_adapter_info(caps)
    assert isinstance(caps.pOutputData, DXGK_DRIVERCAPS)
    assert caps.pOutputData.NumberOfSwizzlingRanges == 0
    assert not caps.pOutputData.MemoryManagementCaps.GpuMmuSupported
    assert not caps.pOutputData.MemoryManagementCaps.VirtualAddressingSupported
    out = DXGK_QUERYSEGMENTOUT4()
    query = DXGKARG_QUERYADAPTERINFO(Type=DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_QUERYSEGMENT4, pOutputData=out)
    bench.driver.query_adapter_info(query)
    assert out.NbSegment == 3 and not out.pSegmentDescriptor, "the first call gives the count only"
    bench.driver.query_adapter_info(query)
    assert out.pSegmentDescriptor is not None
    described = [
        (d.Flags.Aperture, d.Flags.CpuVisible, d.BaseAddress, d.Size, d.CpuTranslatedAddress)
        for d in out.pSegmentDescriptor
    ]
    top = GPU.aperture_table_offset
    assert described == [
        (True, True, GPU.aperture_base, GPU.aperture_size, 0),
        (False, False, GPU.bar_size, top - GPU.bar_size, 0),
        (False, True, 0, GPU.bar_size, GPU.bar_bus_base),
    ]
    assert [s.id for s in bench.adapter.vidmm.spaces] == [1, 2, 3], "VidMm took them as reported"
    capabilities = SIMPLE.capabilities(SIMPLE.default_config())
    assert capabilities.driver_models == frozenset({DriverModel.WDDM1})
    assert not (capabilities.gpummu or capabilities.swizzling or capabilities.tiled_resources)


def test_the_package_configures_wddm1_only() -> None:
    config = SIMPLE.configure(DriverSettings(model=DriverModel.WDDM1, paging_buffer_size=2 * PAGE_SIZE))
    assert isinstance(config, SimpleDriverConfig) and config.paging_buffer_size == 2 * PAGE_SIZE
    assert config.model == DriverModel.WDDM1
    with campaign.case(SURFACE) as box:
        with pytest.raises(ConfigurationError) as refused:
            SIMPLE.configure(DriverSettings(model=DriverModel.WDDM2))
        assert (refused.value.setting, refused.value.value) == ("driver_model", "wddm2")
        box.append(Outcome.REFUSED)


def test_paging_buffers_in_the_aperture_are_fetched_through_it() -> None:
    """``PagingBufferSegmentId`` = 1: VidMm maps its paging buffers there and submits them at aperture addresses."""
    bench = Bench(config=SimpleDriverConfig(paging_buffers_in_aperture=True))
    vidmm = bench.adapter.vidmm
    assert vidmm.paging_home is not None and vidmm.paging_home.space.id == 1
    address = GPU.bar_size
    bench.execute(
        DXGK_BUILDPAGINGBUFFER_FILL(
            FillSize=PAGE_SIZE,
            FillPattern=0x01020304,
            Destination=DXGK_FILL_DESTINATION(SegmentId=2, SegmentAddress=address),
        )
    )
    assert bench.local(address, 8).tobytes() == bytes([4, 3, 2, 1]) * 2
    assert {b.segment_id for b in vidmm.pool.buffers} == {1}


@pytest.mark.parametrize(
    "kind",
    [
        DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_GPUMMUCAPS,
        DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_PAGETABLELEVELDESC,
        DXGK_QUERYADAPTERINFOTYPE.DXGKQAITYPE_QUERYSEGMENT3,
    ],
)
def test_a_query_it_does_not_answer_is_not_supported(bench: Bench, kind: DXGK_QUERYADAPTERINFOTYPE) -> None:
    with campaign.case(SURFACE) as box:
        with pytest.raises(DdiError) as refused:
            bench.driver.query_adapter_info(DXGKARG_QUERYADAPTERINFO(Type=kind))
        assert refused.value.status == NTSTATUS.STATUS_NOT_SUPPORTED
        box.append(Outcome.REFUSED)


def test_page_table_entry_points_are_not_supported(bench: Bench) -> None:
    with campaign.case(SURFACE) as box:
        with pytest.raises(InvalidArgument) as refused:
            bench.driver.get_root_page_table_size(DXGKARG_GETROOTPAGETABLESIZE(NumberOfPte=1))
        assert (refused.value.argument, refused.value.status) == (
            "DxgkDdiGetRootPageTableSize",
            NTSTATUS.STATUS_NOT_SUPPORTED,
        )
        box.append(Outcome.REFUSED)


# --- private data ------------------------------------------------------------------------------------------------


def test_allocations_are_described_from_its_own_private_data(bench: Bench) -> None:
    buffer, visible, aperture, surface = create(
        bench,
        ResourceDesc(ResourceKind.BUFFER, size=5000),
        ResourceDesc(ResourceKind.BUFFER, size=PAGE_SIZE, usage=ResourceUsage.CPU_VISIBLE),
        ResourceDesc(
            ResourceKind.BUFFER, size=PAGE_SIZE, usage=ResourceUsage.CPU_VISIBLE | ResourceUsage.APERTURE_ONLY
        ),
        ResourceDesc(ResourceKind.SURFACE, usage=ResourceUsage.SWIZZLED, width_bytes=300, height=70, mip_levels=2),
    )
    assert len(UMD.encode(ResourceDesc(ResourceKind.BUFFER, size=1))) == FORMAT.size == 32
    assert (buffer.Size, buffer.SupportedReadSegmentSet, buffer.PreferredSegment.segment_ids()[:2]) == (
        2 * PAGE_SIZE,
        0b111,
        [2, 3],
    )
    assert (visible.SupportedReadSegmentSet, visible.Flags.CpuVisible) == (0b101, True)
    assert aperture.SupportedReadSegmentSet == aperture.SupportedWriteSegmentSet == 0b001
    # level 0: 384 bytes x 96 rows; level 1: 256 x 64 -- linear, whole pages, never Swizzled
    assert (surface.Size, surface.Flags.Swizzled) == (384 * 96 + 256 * 64, False)
    assert surface.Size % PAGE_SIZE == 0
    assert UMD.surface_levels(ResourceDesc(ResourceKind.SURFACE, width_bytes=300, height=70, mip_levels=2)) == (
        SurfaceLevel(0, 384, 96),
        SurfaceLevel(384 * 96, 256, 64),
    )
    assert bench.driver.statistics().allocations == 4


def _bad_private_data() -> list[tuple[str, bytes]]:
    good = bytearray(UMD.encode(ResourceDesc(ResourceKind.BUFFER, size=PAGE_SIZE)))

    def changed(offset: int, value: bytes) -> bytes:
        data = bytearray(good)
        data[offset : offset + len(value)] = value
        return bytes(data)

    return [
        (
            "pAllocationInfo[1].pPrivateDriverData",
            REFERENCE.umd.encode(ResourceDesc(ResourceKind.BUFFER, size=PAGE_SIZE)),
        ),
        ("pAllocationInfo[1].pPrivateDriverData", changed(0, b"XGPU")),
        ("pAllocationInfo[1].pPrivateDriverData.kind", changed(5, b"\x02")),
        ("pAllocationInfo[1].pPrivateDriverData.usage", changed(6, bytes([ResourceUsage.EXPLICIT_RESIDENCY, 0]))),
        ("pAllocationInfo[1].pPrivateDriverData.usage", changed(6, bytes([0x30, 0]))),
        ("pAllocationInfo[1].pPrivateDriverData.reserved", changed(18, b"\x01")),
        ("pAllocationInfo[1].pPrivateDriverData.size", changed(24, bytes(8))),
        ("pAllocationInfo[1].pPrivateDriverData", UMD.encode(ResourceDesc(ResourceKind.SURFACE, width_bytes=64))),
    ]


@pytest.mark.parametrize(("argument", "data"), _bad_private_data())
def test_bad_private_data_is_refused_naming_the_field_and_creates_nothing(
    bench: Bench, argument: str, data: bytes
) -> None:
    """The second allocation of the call is bad: the first is not created either (all or nothing)."""
    before = bench.driver.statistics()
    with campaign.case(SURFACE) as box:
        with pytest.raises(InvalidArgument) as refused:
            create(bench, ResourceDesc(ResourceKind.BUFFER, size=PAGE_SIZE), data)
        assert (refused.value.argument, refused.value.status) == (argument, NTSTATUS.STATUS_INVALID_PARAMETER)
        assert bench.driver.statistics() == before
        box.append(Outcome.REFUSED)


# --- contexts ------------------------------------------------------------------------------------------------------


def test_contexts_have_no_image_and_their_handles_are_never_given_twice(bench: Bench) -> None:
    start = bench.driver.statistics().contexts
    first, second = DXGKARG_CREATECONTEXT(NodeOrdinal=1), DXGKARG_CREATECONTEXT(NodeOrdinal=1)
    bench.driver.create_context(first)
    bench.driver.destroy_context(first.hContext)
    bench.driver.create_context(second)
    assert second.hContext != first.hContext and bench.driver.statistics().contexts == start + 1
    assert bench.driver.statistics().allocations == 0, "no context allocation"
    with campaign.case(SURFACE) as box:
        with pytest.raises(InvalidArgument) as refused:
            bench.driver.destroy_context(first.hContext)
        assert refused.value.argument == "hContext" and bench.driver.statistics().contexts == start + 1
        box.append(Outcome.REFUSED)


# --- DxgkDdiRender, DxgkDdiPatch -------------------------------------------------------------------------------


class Renderer:
    def __init__(self, bench: Bench) -> None:
        self.bench = bench
        self.source, self.target = (
            info.hAllocation for info in create(bench, *[ResourceDesc(ResourceKind.BUFFER, size=PAGE_SIZE)] * 2)
        )
        context = DXGKARG_CREATECONTEXT(NodeOrdinal=1)
        bench.driver.create_context(context)
        self.context = context.hContext
        self.mdl, self.mapping = bench.mm.allocate_contiguous(PAGE_SIZE)

    def slots(self, write: bool = True) -> list[DXGK_ALLOCATIONLIST]:
        return [
            DXGK_ALLOCATIONLIST(hDeviceSpecificAllocation=self.source, SegmentId=2, PhysicalAddress=GPU.bar_size),
            DXGK_ALLOCATIONLIST(
                hDeviceSpecificAllocation=self.target, WriteOperation=write, SegmentId=3, PhysicalAddress=PAGE_SIZE
            ),
        ]

    def args(self, command: bytes, patches: list[tuple[int, int, int]], write: bool = True) -> DXGKARG_RENDER:
        listed = tuple(
            D3DDDI_PATCHLOCATIONLIST(AllocationIndex=s, AllocationOffset=o, PatchOffset=at) for s, o, at in patches
        )
        return DXGKARG_RENDER(
            pCommand=command,
            CommandLength=len(command),
            pDmaBuffer=self.mapping.pointer(0),
            DmaSize=PAGE_SIZE,
            pAllocationList=self.slots(write),
            AllocationListSize=2,
            pPatchLocationListIn=listed,
            PatchLocationListInSize=len(listed),
            DmaBufferPhysicalAddress=int(self.mdl.pfns[0]) * PAGE_SIZE,
        )


def test_render_copies_the_packets_and_patch_writes_the_addresses(bench: Bench) -> None:
    r = Renderer(bench)
    command = cmd.encode(cmd.Copy(0, 0, 256)) + cmd.encode(cmd.Fill(0, 64, 7))
    args = r.args(command, [(0, 16, 8), (1, 32, 16), (1, 0, 56)])
    assert bench.driver.render(r.context, args) == NTSTATUS.STATUS_SUCCESS
    assert bytes(r.mapping.pointer(0).bytes(len(command))) == command
    assert [(p.AllocationIndex, p.PatchOffset) for p in args.pPatchLocationListOut] == [(0, 8), (1, 16), (1, 56)]
    bench.driver.patch(
        r.context,
        DXGKARG_PATCH(
            DmaBufferPhysicalAddress=args.DmaBufferPhysicalAddress,
            pDmaBuffer=r.mapping.pointer(0),
            DmaBufferSize=len(command),
            pAllocationList=r.slots(),
            pPatchLocationList=list(args.pPatchLocationListOut),
            PatchLocationListSubmissionLength=3,
        ),
    )
    patched = cmd.decode_all(bytes(r.mapping.pointer(0).bytes(len(command))))
    assert [p for _, p in patched] == [
        cmd.Copy(hw_address(Space.GPU_PHYS, GPU.bar_size + 16), hw_address(Space.GPU_PHYS, PAGE_SIZE + 32), 256),
        cmd.Fill(hw_address(Space.GPU_PHYS, PAGE_SIZE), 64, 7),
    ]


def _bad_renders() -> list[tuple[str, NTSTATUS, bytes, list[tuple[int, int, int]], bool]]:
    copy = cmd.encode(cmd.Copy(0, 0, 256))
    both = [(0, 0, 8), (1, 0, 16)]
    return [
        ("a kernel packet", NTSTATUS.STATUS_PRIVILEGED_INSTRUCTION, cmd.encode(cmd.Signal(0, 1)), [], True),
        ("an unpatched word", NTSTATUS.STATUS_PRIVILEGED_INSTRUCTION, copy, [(0, 0, 8)], True),
        (
            "past the allocation",
            NTSTATUS.STATUS_PRIVILEGED_INSTRUCTION,
            copy,
            [(0, PAGE_SIZE - 128, 8), (1, 0, 16)],
            True,
        ),
        ("no such slot", NTSTATUS.STATUS_INVALID_HANDLE, copy, [(5, 0, 8), (1, 0, 16)], True),
        ("a write without WriteOperation", NTSTATUS.STATUS_INVALID_PARAMETER, copy, both, False),
        ("a patch on no word", NTSTATUS.STATUS_INVALID_PARAMETER, copy, [*both, (1, 0, 32)], True),
        ("an undecodable packet", NTSTATUS.STATUS_ILLEGAL_INSTRUCTION, b"\x7f" + bytes(15), [], True),
        ("a cut packet", NTSTATUS.STATUS_INVALID_USER_BUFFER, copy[:32], [], True),
    ]


@pytest.mark.parametrize(
    ("what", "status", "command", "patches", "write"), _bad_renders(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_render_refuses_with_the_documented_status_and_changes_no_argument(
    bench: Bench, what: str, status: NTSTATUS, command: bytes, patches: list[tuple[int, int, int]], write: bool
) -> None:
    r = Renderer(bench)
    args = r.args(command, patches, write)
    with campaign.case(SURFACE) as box:
        with pytest.raises(DdiError) as refused:
            bench.driver.render(r.context, args)
        assert refused.value.status == status, refused.value
        assert args.pDmaBuffer == r.mapping.pointer(0) and args.MultipassOffset == 0 and not args.pPatchLocationListOut
        box.append(Outcome.REFUSED)


# --- power -----------------------------------------------------------------------------------------------------------


def test_the_aperture_table_survives_a_hibernate(bench: Bench) -> None:
    table = bench.gpu.aperture.entries
    table[:3] = [0x1001, 0x2001, 0x3001]
    d3, d0 = DEVICE_POWER_STATE.PowerDeviceD3, DEVICE_POWER_STATE.PowerDeviceD0
    assert bench.driver.set_power_state(DISPLAY_ADAPTER_HW_ID, d3, POWER_ACTION.PowerActionHibernate) == 0
    assert int(table[0]) != 0x1001 and bench.gpu.local.data[0] == POWER_LOSS_PATTERN & 0xFF, "local memory was lost"
    assert bench.driver.set_power_state(DISPLAY_ADAPTER_HW_ID, d0, POWER_ACTION.PowerActionNone) == 0
    assert table[:3].tolist() == [0x1001, 0x2001, 0x3001]
    with campaign.case(SURFACE) as box:
        with pytest.raises(DdiError) as refused:
            bench.driver.set_power_state(
                DISPLAY_ADAPTER_HW_ID, DEVICE_POWER_STATE.PowerDeviceUnspecified, POWER_ACTION.PowerActionNone
            )
        assert refused.value.status == NTSTATUS.STATUS_INVALID_PARAMETER
        box.append(Outcome.REFUSED)


def test_a_handle_the_driver_never_gave_is_refused(bench: Bench) -> None:
    with campaign.case(SURFACE) as box:
        with pytest.raises(InvalidArgument) as refused:
            bench.driver.render(HANDLE(0x1234), Renderer(bench).args(b"", []))
        assert refused.value.argument == "hContext"
        box.append(Outcome.REFUSED)
