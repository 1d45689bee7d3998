"""A library's own ``DxgkDdiQueryAdapterInfo`` (decisions 0134, 0135): its GpuMmu and QUERYSEGMENT4 answers must
agree with the adapter's, member by member; a disagreement, a bad answer or a failure status refuses the driver
naming the member and both values; a type answered STATUS_NOT_SUPPORTED leaves the adapter's answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from wddmsim.core.errors import ConfigurationError
from wddmsim.ddi.segments import DXGK_SEGMENTDESCRIPTOR4
from wddmsim.drivers.native.driver import NativeDriver
from wddmsim.scenarios.rig import PagingRig
from wddmsim.system import SystemConfig
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome
from wddmsim.vidmm.discovery import query_segments
from wddmsim.vidmm.gpummu import GpuMmuDescription

from .conftest import BuildDriver

SOURCE = Path(__file__).with_name("adapter_info.c")
SURFACE = "native driver: DxgkDdiQueryAdapterInfo"
_LEVEL_MEMBERS = (
    "PageTableIndexBitCount",
    "PageTableSegmentId",
    "PagingProcessPageTableSegmentId",
    "PageTableSizeInBytes",
    "PageTableAlignmentInBytes",
)


def _description(tmp_path: Path, library: Path) -> Path:
    toml = tmp_path / "qai.toml"
    toml.write_text(f'library = "{library}"\nmodel = "wddm2"\noperations = ["Transfer"]\n', encoding="utf-8")
    return toml


@pytest.fixture(scope="module")
def reference_rig() -> PagingRig:
    """The reference base in the GpuMmu model: what it reports, the library must say the same."""
    from wddmsim.drivers.package import DriverModel, DriverSettings
    from wddmsim.drivers.reference import REFERENCE

    return PagingRig(
        SystemConfig(driver_package=REFERENCE, driver=REFERENCE.configure(DriverSettings(model=DriverModel.WDDM2)))
    )


@pytest.fixture(scope="module")
def adapter_mmu(reference_rig: PagingRig) -> GpuMmuDescription:
    assert reference_rig.vidmm.gpummu is not None
    return reference_rig.vidmm.gpummu


@pytest.fixture(scope="module")
def adapter_segments(reference_rig: PagingRig) -> tuple[list[DXGK_SEGMENTDESCRIPTOR4], int, int, int]:
    """The reference base's QUERYSEGMENT4 answer: descriptors, paging-buffer size, private size, segment id."""
    return query_segments(reference_rig.driver)


def _segment_macros(
    answer: tuple[list[DXGK_SEGMENTDESCRIPTOR4], int, int, int], size_delta: int = 0, **variant: str
) -> dict[str, str]:
    """SEGMENTS and PAGING for ``adapter_info.c`` from the adapter's answer; the last segment ``size_delta`` off."""
    descriptors, size, private, segment_id = answer
    items = []
    for index, d in enumerate(descriptors):
        delta = size_delta if index == len(descriptors) - 1 else 0
        items.append(
            f"{{.Flags = {{.Value = {d.Flags.Value}u}}, .BaseAddress = {{.QuadPart = {d.BaseAddress}}}, "
            f".Size = {d.Size + delta}u, .CommitLimit = {d.CommitLimit}u}}"
        )
    return {"SEGMENTS": "{" + ", ".join(items) + "}", "PAGING": f"{{{segment_id}u, {size}u, {private}u}}", **variant}


def _macros(mmu: GpuMmuDescription, **change: int) -> dict[str, str]:
    caps = mmu.caps
    values = {
        "Flags": caps.Flags.Value,
        "PageTableUpdateMode": int(caps.PageTableUpdateMode),
        "VirtualAddressBitCount": caps.VirtualAddressBitCount,
        "LeafPageTableSizeFor64KPagesInBytes": caps.LeafPageTableSizeFor64KPagesInBytes,
        "PageTableLevelCount": caps.PageTableLevelCount,
        "LegacyBehaviors": caps.LegacyBehaviors.Value,
    }
    values.update({k: v for k, v in change.items() if k in values})
    levels = [[getattr(level, m) for m in _LEVEL_MEMBERS] for level in mmu.levels]
    if "PageTableSizeInBytes0" in change:
        levels[0][3] = change["PageTableSizeInBytes0"]
    return {
        "CAPS": (
            f"{{{{.Value = {values['Flags']}u}}, (DXGK_PAGETABLEUPDATEMODE){values['PageTableUpdateMode']}, "
            f"{values['VirtualAddressBitCount']}u, {values['LeafPageTableSizeFor64KPagesInBytes']}u, "
            f"{values['PageTableLevelCount']}u, {{.Value = {values['LegacyBehaviors']}u}}}}"
        ),
        "LEVELS": "{" + ", ".join("{" + ", ".join(f"{v}u" for v in level) + "}" for level in levels) + "}",
    }


def test_a_library_that_agrees_with_the_adapter_is_accepted(
    build_driver: BuildDriver, tmp_path: Path, adapter_mmu: GpuMmuDescription
) -> None:
    library = build_driver(SOURCE, **_macros(adapter_mmu))
    with campaign.case(SURFACE) as box:
        rig = PagingRig(SystemConfig(driver_package=str(_description(tmp_path, library))))
        assert isinstance(rig.driver, NativeDriver) and rig.driver.adapter_info is not None
        assert rig.vidmm.gpummu is not None and rig.vidmm.gpummu.caps == adapter_mmu.caps
        box.append(Outcome.ACCEPTED)


@pytest.mark.parametrize(
    ("change", "member"),
    [
        ({"PageTableLevelCount": 3}, "DXGK_GPUMMUCAPS.PageTableLevelCount=3"),
        ({"VirtualAddressBitCount": 40}, "DXGK_GPUMMUCAPS.VirtualAddressBitCount=40"),
        ({"Flags": 0}, "DXGK_GPUMMUCAPS.Flags=0"),
        ({"PageTableSizeInBytes0": 8192}, "DXGK_PAGE_TABLE_LEVEL_DESC[0].PageTableSizeInBytes=8192"),
    ],
    ids=["levels", "va-bits", "flags", "leaf-size"],
)
def test_a_library_that_disagrees_is_refused_naming_the_member(
    build_driver: BuildDriver,
    tmp_path: Path,
    adapter_mmu: GpuMmuDescription,
    change: dict[str, int],
    member: str,
) -> None:
    library = build_driver(SOURCE, **_macros(adapter_mmu, **change))
    with campaign.case(SURFACE) as box:
        with pytest.raises(ConfigurationError, match="must agree") as caught:
            PagingRig(SystemConfig(driver_package=str(_description(tmp_path, library))))
        assert str(caught.value).startswith(member), caught.value
        box.append(Outcome.REFUSED)


def test_a_failing_query_is_refused_naming_the_ddi(
    build_driver: BuildDriver, tmp_path: Path, adapter_mmu: GpuMmuDescription
) -> None:
    library = build_driver(SOURCE, QAI_STATUS="0xC0000001u", **_macros(adapter_mmu))
    with campaign.case(SURFACE) as box:
        # Discovery asks the segments first (decision 0135), so the first refused query is QUERYSEGMENT4.
        with pytest.raises(ConfigurationError, match=r"DxgkDdiQueryAdapterInfo='DXGKQAITYPE_QUERYSEGMENT4'.*UNSUCCESS"):
            PagingRig(SystemConfig(driver_package=str(_description(tmp_path, library))))
        box.append(Outcome.REFUSED)


def _segment_library(
    build_driver: BuildDriver,
    mmu: GpuMmuDescription,
    answer: tuple[list[DXGK_SEGMENTDESCRIPTOR4], int, int, int],
    size_delta: int = 0,
    variant: dict[str, str] | None = None,
) -> Path:
    return build_driver(SOURCE, **_macros(mmu), **_segment_macros(answer, size_delta, **(variant or {})))


@pytest.mark.parametrize("stride", ["", "128u"], ids=["sizeof", "larger-stride"])
def test_a_library_whose_segments_agree_is_accepted(
    build_driver: BuildDriver,
    tmp_path: Path,
    adapter_mmu: GpuMmuDescription,
    adapter_segments: tuple[list[DXGK_SEGMENTDESCRIPTOR4], int, int, int],
    stride: str,
) -> None:
    """Both QUERYSEGMENT4 calls answered as the adapter answers, the descriptors walked with the reported stride."""
    variant = {"SEG_STRIDE": stride} if stride else {}
    library = _segment_library(build_driver, adapter_mmu, adapter_segments, variant=variant)
    with campaign.case(SURFACE) as box:
        rig = PagingRig(SystemConfig(driver_package=str(_description(tmp_path, library))))
        assert isinstance(rig.driver, NativeDriver) and rig.driver.adapter_info is not None
        assert query_segments(rig.driver) == adapter_segments
        box.append(Outcome.ACCEPTED)


@pytest.mark.parametrize(
    ("size_delta", "variant", "message"),
    [
        (4096, {}, r"^DXGK_SEGMENTDESCRIPTOR4\[\d+\]\.Size=\d+: .* answers 0x[0-9a-f]+, the adapter .* has 0x"),
        (0, {"SEG_STRIDE": "88u"}, r"^DXGK_QUERYSEGMENTOUT4\.SegmentDescriptorStride=88: .* = 96 to 256"),
        (0, {"SEG_FIRST_COUNT": "0u"}, r"^DXGK_QUERYSEGMENTOUT4\.NbSegment=0: the first .* must report the count"),
        (0, {"SEG_FIRST_COUNT": "1u"}, r"^DXGK_QUERYSEGMENTOUT4\.NbSegment=1: .* answers 0x1, the adapter .* has 0x"),
        (
            0,
            {"SEG_SECOND_STATUS": "0xC0000001u"},
            r"^DxgkDdiQueryAdapterInfo='DXGKQAITYPE_QUERYSEGMENT4'.*UNSUCCESSFUL",
        ),
    ],
    ids=["segment-size", "short-stride", "count-zero", "count-differs", "second-call-fails"],
)
def test_a_bad_segment_answer_is_refused_naming_the_member(
    build_driver: BuildDriver,
    tmp_path: Path,
    adapter_mmu: GpuMmuDescription,
    adapter_segments: tuple[list[DXGK_SEGMENTDESCRIPTOR4], int, int, int],
    size_delta: int,
    variant: dict[str, str],
    message: str,
) -> None:
    library = _segment_library(build_driver, adapter_mmu, adapter_segments, size_delta, variant)
    with campaign.case(SURFACE) as box:
        with pytest.raises(ConfigurationError, match=message):
            PagingRig(SystemConfig(driver_package=str(_description(tmp_path, library))))
        box.append(Outcome.REFUSED)


def test_a_library_that_does_not_answer_segments_keeps_the_adapters(
    build_driver: BuildDriver,
    tmp_path: Path,
    adapter_mmu: GpuMmuDescription,
    adapter_segments: tuple[list[DXGK_SEGMENTDESCRIPTOR4], int, int, int],
) -> None:
    """QUERYSEGMENT4 answered STATUS_NOT_SUPPORTED (no SEGMENTS macro): the adapter's segments, silently."""
    library = build_driver(SOURCE, **_macros(adapter_mmu))
    with campaign.case(SURFACE) as box:
        rig = PagingRig(SystemConfig(driver_package=str(_description(tmp_path, library))))
        assert query_segments(rig.driver) == adapter_segments
        box.append(Outcome.ACCEPTED)


def test_a_library_that_answers_nothing_keeps_the_adapters_answers(
    build_driver: BuildDriver, tmp_path: Path, adapter_mmu: GpuMmuDescription
) -> None:
    """Every type answered STATUS_NOT_SUPPORTED: the library need not answer; the adapter's caps are used."""
    library = build_driver(SOURCE, QAI_STATUS="0xC00000BBu", **_macros(adapter_mmu))
    with campaign.case(SURFACE) as box:
        rig = PagingRig(SystemConfig(driver_package=str(_description(tmp_path, library))))
        assert rig.vidmm.gpummu is not None and rig.vidmm.gpummu.caps == adapter_mmu.caps
        box.append(Outcome.ACCEPTED)
