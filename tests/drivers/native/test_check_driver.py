"""``wddmsim check-driver`` (issue 21, item 4): the reference and simple drivers and the example C driver are
conformant; each broken variant of the C driver -- one defect real drivers are known to have -- exits 1 with the
named check failed and a message that points at the cause; bad usage exits 2."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.conformance import check_driver
from wddmsim.conformance.checks import CHECKS
from wddmsim.conformance.run import SEGMENT_MODEL
from wddmsim.drivers.registry import driver_package
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome

from .conftest import BuildDriver

SURFACE = "check-driver: broken drivers"


@pytest.mark.parametrize("name", ["reference", "simple"])
def test_the_built_in_drivers_are_conformant(name: str) -> None:
    report = check_driver(driver_package(name))
    assert report.conformant, [(f.check, f.operation, f.case, f.message) for f in report.findings]
    assert set(report.outcomes) == set(SEGMENT_MODEL) and len(SEGMENT_MODEL) == 7
    for operation in report.outcomes:
        assert all(report.status(operation, check) == "pass" for check in CHECKS), operation
    transfer_sweeps = [len(o.sizes) for o in report.outcomes["Transfer"]]
    assert max(transfer_sweeps) > 3, "a transfer through scattered pages splits at several DMA sizes"


def test_the_example_c_driver_is_conformant_with_junit_and_html(build_driver: BuildDriver, tmp_path: Path) -> None:
    junit, out = tmp_path / "results.xml", tmp_path / "report"
    result = CliRunner().invoke(main, ["check-driver", str(build_driver()), "--junit", str(junit), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "conformant" in result.output
    suite = ET.parse(junit).getroot()
    assert suite.get("failures") == "0" and int(suite.get("tests", "0")) >= len(CHECKS) * 13
    page = (out / "check-driver.html").read_text(encoding="utf-8")
    assert "conformant" in page and "Content-Security-Policy" in page


DEFECTS = [
    # (REFGPU_DEFECT, operation, check, words of the message)
    (1, "Transfer", "bytes", "memory -> memory"),
    (2, "Transfer", "bytes", "MDL page 3"),
    (3, "UnmapApertureSegment", "effect", "STATUS_SUCCESS having written nothing"),
    (4, "Fill", "bounds", "outside"),
    (5, "Fill", "status", "returned STATUS_INVALID_PARAMETER"),
    (6, "Transfer", "progress", "the progress is lost"),
    (7, "Transfer", "bounds", "wrote past the returned pDmaBuffer"),
    (8, "Fill", "canaries", "outside the destination changed"),
    (9, "MapApertureSegment", "build-time", "changed while the buffer was built"),
]


@pytest.mark.parametrize(("defect", "operation", "check", "words"), DEFECTS, ids=[str(d[0]) for d in DEFECTS])
def test_each_broken_variant_is_caught_by_its_named_check(
    build_driver: BuildDriver, tmp_path: Path, defect: int, operation: str, check: str, words: str
) -> None:
    library = build_driver(REFGPU_DEFECT=defect)
    junit = tmp_path / "results.xml"
    with campaign.case(SURFACE) as box:
        result = CliRunner().invoke(main, ["check-driver", str(library), "--junit", str(junit)])
        assert result.exit_code == 1, result.output
        assert f"{check} {operation}" in result.output and words in result.output, result.output
        failures = [c for c in ET.parse(junit).getroot() if c.find("failure") is not None]
        assert any(c.get("name") == check and c.get("classname", "").startswith(operation) for c in failures)
        box.append(Outcome.REFUSED)


@pytest.mark.parametrize(
    "args",
    [
        ["check-driver", "/nonexistent/libnone.so"],
        ["check-driver", "reference", "--executor", "gpu"],
        ["check-driver", "LIB", "--executor", "fpga"],
    ],
)
def test_bad_usage_exits_2_naming_the_argument(build_driver: BuildDriver, args: list[str]) -> None:
    args = [str(build_driver()) if a == "LIB" else a for a in args]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert "LIBRARY" in result.output or "--executor" in result.output, result.output
