"""A library's own ``DxgkDdiQueryAdapterInfo`` (decision 0134): its GpuMmu answers must agree with the adapter's,
member by member; a disagreement or a failure status refuses the driver naming the member and both values."""

from __future__ import annotations

from pathlib import Path

import pytest

from wddmsim.core.errors import ConfigurationError
from wddmsim.drivers.native.driver import NativeDriver
from wddmsim.scenarios.rig import PagingRig
from wddmsim.system import SystemConfig
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome
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
def adapter_mmu() -> GpuMmuDescription:
    """What the reference base reports in the GpuMmu model (the library must say the same)."""
    from wddmsim.drivers.package import DriverModel, DriverSettings
    from wddmsim.drivers.reference import REFERENCE

    rig = PagingRig(
        SystemConfig(driver_package=REFERENCE, driver=REFERENCE.configure(DriverSettings(model=DriverModel.WDDM2)))
    )
    assert rig.vidmm.gpummu is not None
    return rig.vidmm.gpummu


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
        with pytest.raises(ConfigurationError, match=r"DxgkDdiQueryAdapterInfo='DXGKQAITYPE_GPUMMUCAPS'.*UNSUCCESSFUL"):
            PagingRig(SystemConfig(driver_package=str(_description(tmp_path, library))))
        box.append(Outcome.REFUSED)
