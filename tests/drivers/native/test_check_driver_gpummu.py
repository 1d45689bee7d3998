"""``wddmsim check-driver`` in the GpuMmu model (issue 21; decision 0125): the reference driver is conformant in both
models -- the checker proved on a known-correct driver, UpdatePageTable and CopyPageTableEntries included -- and so
is the example C driver with its wddm2 description; each broken GpuMmu variant is caught by its named check; the
STATUS_GRAPHICS_ALLOCATION_BUSY protocol is held to: re-called with Flags.AllocationIsIdle, never BUSY with it."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.conformance import check_driver
from wddmsim.conformance.checks import CHECKS
from wddmsim.conformance.gpummu import hw_words
from wddmsim.conformance.rig import Rig
from wddmsim.conformance.run import GPUMMU_MODEL, configuration
from wddmsim.ddi.flags import DXGK_PAGETABLEUPDATEMODE
from wddmsim.ddi.paging import DXGK_BUILDPAGINGBUFFER_FILL, DXGK_BUILDPAGINGBUFFER_TRANSFER, DXGKARG_BUILDPAGINGBUFFER
from wddmsim.ddi.pte import pte_array, pte_flags
from wddmsim.ddi.status import NTSTATUS
from wddmsim.drivers.native.description import read_description
from wddmsim.drivers.package import DriverModel
from wddmsim.drivers.registry import driver_package
from wddmsim.hw.pte import Target, encode_pte
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome
from wddmsim.testing.fakes import DelegatingDriver, wrapped

from .conftest import EXAMPLES, BuildDriver, c_compiler

SURFACE = "check-driver: broken GpuMmu drivers"
DEFECTS_C = Path(__file__).with_name("gpummu_defects.c")
WDDM2_TOML = EXAMPLES / "refgpu" / "refgpu-wddm2.toml"
VIRTUAL = (
    "TransferVirtual",
    "FillVirtual",
    "UpdatePageTable",
    "FlushTlb",
    "CopyPageTableEntries",
    "SignalMonitoredFence",
)


@pytest.mark.parametrize("model", ["wddm1", "wddm2"])
def test_check_driver_reference_exits_0_in_both_models(model: str, tmp_path: Path) -> None:
    junit = tmp_path / "results.xml"
    result = CliRunner().invoke(main, ["check-driver", "reference", "--model", model, "--junit", str(junit)])
    assert result.exit_code == 0, result.output
    assert f"({model})" in result.output and "conformant" in result.output, result.output
    suite = ET.parse(junit).getroot()
    assert suite.get("failures") == "0"
    classes = {c.get("classname", "").split(".")[0] for c in suite}
    if model == "wddm2":
        assert classes == set(GPUMMU_MODEL)
        assert "no case yet" not in result.output
    else:
        assert not classes & set(VIRTUAL)


def test_every_gpummu_operation_goes_through_every_check_on_the_reference_driver() -> None:
    package = driver_package("reference")
    report = check_driver(package, configuration(package, DriverModel.WDDM2))
    assert report.conformant, [(f.check, f.operation, f.case, f.message) for f in report.findings]
    for operation in VIRTUAL:
        assert all(report.status(operation, check) == "pass" for check in CHECKS), operation
    names = [o.case.name for o in report.outcomes["UpdatePageTable"]]
    for words in ("Repeat", "Use64KBPages", "dual PTE", "forced CPU_VIRTUAL", "(GPU_VIRTUAL)", "DriverProtection"):
        assert any(words in name for name in names), (words, names)
    sweeps = {o.case.name: len(o.sizes) for o in report.outcomes["UpdatePageTable"]}
    assert max(sweeps.values()) > 3, "an update of 40 entries splits at several DMA sizes"


def test_the_gpu_physical_update_mode_is_checked_when_the_driver_reports_it() -> None:
    package = driver_package("reference")
    base: Any = configuration(package, DriverModel.WDDM2)
    config = dataclasses.replace(
        base,
        page_table_update_mode=DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_GPU_PHYSICAL,
    )
    report = check_driver(package, config)
    assert report.conformant, [(f.check, f.operation, f.case, f.message) for f in report.findings]
    names = [o.case.name for o in report.outcomes["UpdatePageTable"]]
    assert sum("(GPU_PHYSICAL)" in n for n in names) >= 4 and not any("(GPU_VIRTUAL)" in n for n in names)


def test_expected_table_words_follow_the_data_sheet_not_the_driver() -> None:
    """The expectation of UpdatePageTable, spelled out for one entry of each kind from ``wddmsim.hw.pte``."""
    package = driver_package("reference")
    rig = Rig(package, configuration(package, DriverModel.WDDM2))
    memory = rig.memory_segments()[0]
    entries = pte_array(4)
    entries[0] = (pte_flags(Valid=1, Segment=memory.id, ReadOnly=1), 5)
    entries[1] = (pte_flags(Valid=1, CacheCoherent=1), 0x1234)
    entries[2] = (pte_flags(Zero=1), 0)
    entries[3] = (pte_flags(Segment=memory.id, ReadOnly=1), 9)  # not Valid: all zero
    words = hw_words(rig, entries, level=0, protection=0x1A5)
    assert words.tolist() == [
        encode_pte(target=Target.LOCAL, address=memory.base + 5 * 4096, read_only=True, key=0xA5),
        encode_pte(target=Target.SYSTEM, address=0x1234 * 4096, snoop=True, key=0xA5),
        encode_pte(target=Target.SYSTEM, address=0, zero=True, key=0xA5),
        0,
    ]
    assert hw_words(rig, entries[:1], level=1, protection=0x1A5).tolist() == [
        encode_pte(target=Target.LOCAL, address=memory.base + 5 * 4096, read_only=True)
    ]


@pytest.fixture(scope="module")
def build_variant(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """``build_variant[n]``: gpummu_defects.c built with GPUMMU_DEFECT=n (the example driver, wrapped)."""
    compiler = c_compiler()
    if compiler is None:
        pytest.skip("no C compiler on this machine (CI installs gcc)")
    cc = compiler
    where = tmp_path_factory.mktemp("gpummu")
    source = DEFECTS_C.read_text(encoding="utf-8")

    class Built(dict[int, Path]):
        def __missing__(self, defect: int) -> Path:
            flags = ("-O2", f"-I{EXAMPLES / 'refgpu'}", f"-DGPUMMU_DEFECT={defect}")
            self[defect] = cc.shared_library(source, where / f"libgpummu{defect}.so", flags)
            return self[defect]

    return Built()


def test_the_example_c_driver_is_conformant_in_the_gpummu_model(build_driver: BuildDriver, tmp_path: Path) -> None:
    """Whatever the shipped description claims is checked."""
    junit = tmp_path / "results.xml"
    toml = WDDM2_TOML  # its library key is replaced by the LIBRARY argument
    result = CliRunner().invoke(
        main, ["check-driver", str(build_driver()), "--adapter", str(toml), "--junit", str(junit)]
    )
    assert result.exit_code == 0, result.output
    assert "(wddm2)" in result.output and "no case yet" not in result.output, result.output
    suite = ET.parse(junit).getroot()
    assert suite.get("failures") == "0"
    claimed = read_description(WDDM2_TOML).operation_names
    assert {"UpdatePageTable", "CopyPageTableEntries", "TransferVirtual"} <= set(claimed)
    assert {c.get("classname", "").split(".")[0] for c in suite} == set(claimed)


GPUMMU_DEFECTS = [
    # (GPUMMU_DEFECT, operation, check, words of the message)
    (1, "FillVirtual", "canaries", "outside the destination changed"),
    (2, "SignalMonitoredFence", "bytes", "got 00000000 expected 01000000"),
    (3, "TransferVirtual", "bytes", "the GPU faulted"),
    (4, "Transfer", "status", "ALLOCATION_BUSY with Flags.AllocationIsIdle set"),
    (6, "FillVirtual", "status", "legal only for Transfer, DiscardContent and SpecialLockTransfer"),
]


@pytest.mark.parametrize(
    ("defect", "operation", "check", "words"), GPUMMU_DEFECTS, ids=[str(d[0]) for d in GPUMMU_DEFECTS]
)
def test_each_broken_gpummu_variant_is_caught_by_its_named_check(
    build_variant: dict[int, Path], tmp_path: Path, defect: int, operation: str, check: str, words: str
) -> None:
    toml = WDDM2_TOML
    junit = tmp_path / "results.xml"
    with campaign.case(SURFACE) as box:
        result = CliRunner().invoke(
            main, ["check-driver", str(build_variant[defect]), "--adapter", str(toml), "--junit", str(junit)]
        )
        assert result.exit_code == 1, result.output
        assert f"{check} {operation}" in result.output and words in result.output, result.output
        failures = [c for c in ET.parse(junit).getroot() if c.find("failure") is not None]
        assert any(c.get("name") == check and c.get("classname", "").startswith(operation) for c in failures)
        box.append(Outcome.REFUSED)


def test_a_flush_of_the_wrong_range_is_named(build_driver: BuildDriver, tmp_path: Path) -> None:
    """The example driver's own FlushTlb defect (decision 0115), now caught by check-driver itself."""
    library = build_driver(REFGPU_DEFECT=10)
    toml = WDDM2_TOML
    with campaign.case(SURFACE) as box:
        result = CliRunner().invoke(main, ["check-driver", str(library), "--adapter", str(toml)])
        assert result.exit_code == 1, result.output
        assert "bytes FlushTlb" in result.output and "stale translation" in result.output, result.output
        box.append(Outcome.REFUSED)


def test_a_driver_answering_busy_is_called_again_with_allocation_is_idle(
    build_variant: dict[int, Path], tmp_path: Path
) -> None:
    """BUSY until the flag is set is the documented protocol: conformant."""
    toml = WDDM2_TOML
    result = CliRunner().invoke(main, ["check-driver", str(build_variant[5]), "--adapter", str(toml)])
    assert result.exit_code == 0, result.output


class BusyOnce(DelegatingDriver):
    """ALLOCATION_BUSY to a Transfer without ``AllocationIsIdle``; records what each call was given."""

    calls: list[tuple[bool, int, int, int]]

    def build_into_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        payload = args.payload
        if isinstance(payload, DXGK_BUILDPAGINGBUFFER_TRANSFER):
            assert args.pDmaBuffer is not None
            record = (payload.Flags.AllocationIsIdle, args.MultipassOffset, args.pDmaBuffer.offset, args.DmaSize)
            type(self).calls.append(record)
            if not payload.Flags.AllocationIsIdle:
                return NTSTATUS.STATUS_GRAPHICS_ALLOCATION_BUSY
        return self.inner.build_paging_buffer(args)


def test_the_retry_after_busy_changes_only_the_flag() -> None:
    """The same operation, the same MultipassOffset and the same empty buffer -- only Flags.AllocationIsIdle set."""
    BusyOnce.calls = []
    package = wrapped("reference", BusyOnce, name="busy-once", description="BUSY once per Transfer")
    report = check_driver(package)
    assert report.conformant, [(f.check, f.operation, f.case, f.message) for f in report.findings]
    calls = BusyOnce.calls
    retries = [i for i, c in enumerate(calls[:-1]) if not c[0] and calls[i + 1][0]]
    assert retries, calls
    for i in retries:
        busy, retry = calls[i], calls[i + 1]
        assert retry[1:] == busy[1:], (busy, retry)
    assert np.all(np.array([c[1] for c in calls if not c[0]]) == 0), "BUSY answers come before any progress"


class BusyOnceFill(DelegatingDriver):
    """ALLOCATION_BUSY once to every Fill (which may never answer it), then the real driver's answer."""

    def build_into_buffer(self, args: DXGKARG_BUILDPAGINGBUFFER) -> NTSTATUS:
        if isinstance(args.payload, DXGK_BUILDPAGINGBUFFER_FILL) and not getattr(self, "answered", False):
            self.answered = True
            return NTSTATUS.STATUS_GRAPHICS_ALLOCATION_BUSY
        self.answered = False
        return self.inner.build_paging_buffer(args)


def test_busy_from_an_operation_that_may_not_answer_it_is_named() -> None:
    """Only Transfer, DiscardContent and SpecialLockTransfer may answer ALLOCATION_BUSY: a Fill that does, even once
    and then succeeds, is named by the ``status`` check (it was accepted)."""
    package = wrapped("reference", BusyOnceFill, name="busy-once-fill", description="BUSY once per Fill")
    with campaign.case(SURFACE) as box:
        report = check_driver(package)
        assert report.status("Fill", "status") == "FAIL", report.findings
        finding = next(f for f in report.findings if f.operation == "Fill")
        assert "ALLOCATION_BUSY from DXGK_OPERATION_FILL" in finding.message, finding.message
        assert all(f.operation == "Fill" for f in report.findings)
        box.append(Outcome.REFUSED)
