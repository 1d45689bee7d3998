"""Issue 22 item 6: a sweep's figures and report.html, from sweep directories built per the contract.

The numbers under the figures (mean and 95 % t-interval over seeds) are checked against hand computations; the
figures exist as PNG and SVG, carry their titles, labels and policy names, and are the same bytes when drawn
twice; failed runs are left out and listed; a sweep without frames.csv gets a note, not a crash.
"""

from __future__ import annotations

import base64
import math
import re
import shutil
from html import escape
from pathlib import Path
from xml.dom import minidom

import pytest

from wddmsim.core.errors import ConfigurationError
from wddmsim.viz.sweep_data import interval, load_sweep, t975
from wddmsim.viz.sweep_figures import NO_FRAMES
from wddmsim.viz.sweep_plan import PlotOptions, plan
from wddmsim.viz.sweep_report import plot_sweep, write_sweep_report

from .sweep_fixture import SweepSpec, make_sweep

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
FAILED = ("lru", 2.0, 2)


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path], dict[tuple[str, float, int], str]]:
    root = tmp_path_factory.mktemp("sweep")
    ids = make_sweep(root, SweepSpec(failed={FAILED}))
    return root, write_sweep_report(root), ids


def test_the_t_quantiles_are_student_s() -> None:
    # Tabled values (any statistics textbook): t(0.975; 1) = 12.706, t(0.975; 2) = 4.303, t(0.975; 10) = 2.228,
    # t(0.975; 30) = 2.042, t(0.975; 60) = 2.000, t(0.975; 120) = 1.980.
    for df, value in ((1, 12.706), (2, 4.303), (10, 2.228), (30, 2.042), (60, 2.000), (120, 1.980)):
        assert round(t975(df), 3) == value
    scipy_stats = pytest.importorskip("scipy.stats")
    for df in (*range(1, 40), 50, 100, 1000):
        assert abs(t975(df) - float(scipy_stats.t.ppf(0.975, df))) < 2e-6
    with pytest.raises(ValueError, match="degrees of freedom"):
        t975(0)


def test_the_interval_is_mean_plus_minus_t_s_over_root_n() -> None:
    # 1, 2, 6: mean 3; s² = (4 + 1 + 9) / 2 = 7; half = t(0.975; 2) · √7 / √3 = 4.302653 · 1.527525 = 6.572411
    got = interval([1.0, 2.0, 6.0])
    assert got.mean == 3.0 and got.n == 3
    assert got.half is not None and abs(got.half - 6.572411) < 1e-6
    assert abs(got.low - (3 - 6.572411)) < 1e-6 and abs(got.high - (3 + 6.572411)) < 1e-6
    single = interval([4.5])
    assert (single.mean, single.half, single.n, single.low, single.high) == (4.5, None, 1, 4.5, 4.5)


def test_the_plan_groups_runs_per_policy_and_x_and_leaves_failed_runs_out(tmp_path: Path) -> None:
    values = {1: 1.0, 2: 2.0, 3: 6.0}
    make_sweep(tmp_path, SweepSpec(failed={FAILED}, metric=lambda p, x, seed: values[seed] * x))
    p = plan(load_sweep(tmp_path), PlotOptions())
    assert p.x == "workload.oversubscription" and p.y == "paged_in_over_lower_bound"
    assert p.x_numeric and p.x_values == ["1.1", "1.5", "2.0"]
    assert p.series == ["lru", "clock", "opt"] and p.series_keys == ["policy"]
    clock = p.points[("clock", "2.0")]
    assert (clock.values, clock.ok, clock.failed) == ([2.0, 4.0, 12.0], 3, 0)
    stats = clock.stats()
    assert stats is not None and stats.mean == 6.0 and stats.half is not None
    assert abs(stats.half - 2 * 6.572411) < 1e-5  # every value doubled: the half-width doubles
    lru = p.points[("lru", "2.0")]
    assert (lru.values, lru.ok, lru.failed) == ([2.0, 12.0], 2, 1)
    lru_stats = lru.stats()
    # 2, 12: mean 7, s = √50, half = 12.706205 · √50 / √2 = 12.706205 · 5 = 63.531025
    assert lru_stats is not None and lru_stats.half is not None and abs(lru_stats.half - 63.531025) < 1e-5
    # occupancy by default: one run per policy at the largest x, the first seed that succeeded
    assert [(r.cells["policy"], r.seed) for r in p.occupancy_runs] == [("lru", "1"), ("clock", "1"), ("opt", "1")]


def test_the_figures_exist_as_png_and_svg_with_titles_labels_and_policies(
    swept: tuple[Path, list[Path], dict[tuple[str, float, int], str]],
) -> None:
    root, written, _ = swept
    names = sorted(p.relative_to(root).as_posix() for p in written)
    assert names == [
        "figures/frame-stalls.png",
        "figures/frame-stalls.svg",
        "figures/occupancy.png",
        "figures/occupancy.svg",
        "figures/paged_in_over_lower_bound-by-workload_oversubscription.png",
        "figures/paged_in_over_lower_bound-by-workload_oversubscription.svg",
        "report.html",
    ]
    for path in written:
        data = path.read_bytes()
        assert len(data) > 5000, path
        if path.suffix == ".png":
            assert data.startswith(PNG_MAGIC)
    metric = (root / "figures/paged_in_over_lower_bound-by-workload_oversubscription.svg").read_text()
    assert "Bytes paged in ÷ lower bound against oversubscription — default" in metric
    assert "oversubscription (bytes of all resources ÷ local memory, ×)" in metric
    assert "bytes paged in ÷ lower bound (×)" in metric
    assert "mean over seeds, band: 95 % t-interval" in metric and ">lower bound<" in metric
    for policy in ("lru", "clock", "opt"):
        assert f">{policy}<" in metric
    stalls = (root / "figures/frame-stalls.svg").read_text()
    assert "Per-frame paging stall at workload.oversubscription = 2.0 — default" in stalls
    assert "simulated paging stall per frame (µs)" in stalls and "fraction of frames at or below (ECDF)" in stalls
    # lru at x = 2: seeds 1 and 3 (seed 2 failed), stall = 1000·(frame+1)·2·2 + seed ns: 12 frames, 4..24 µs
    # p50 of (4,4,8,8,...,24,24) µs + a few ns = 14 µs; p99 ≈ 24 µs
    assert "lru: p50 14 µs, p99 24 µs (12 frames)" in stalls
    assert "clock: p50 7 µs, p99 12 µs (18 frames)" in stalls
    occupancy = (root / "figures/occupancy.svg").read_text()
    assert "Occupancy over time — default" in occupancy
    assert "local memory (MiB)" in occupancy and "aperture (MiB)" in occupancy and ">frame<" in occupancy
    for policy in ("lru", "clock", "opt"):
        assert f"{policy}, workload.oversubscription = 2.0, seed 1" in occupancy
    assert not re.search(r"<dc:date>", metric), "no date in the metadata"


def test_the_report_holds_the_figures_the_grid_the_summary_and_the_failed_runs(
    swept: tuple[Path, list[Path], dict[tuple[str, float, int], str]],
) -> None:
    root, _, ids = swept
    html = (root / "report.html").read_text()
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html
    uris = re.findall(r'<img class="figure" alt="[^"]*" src="data:image/svg\+xml;base64,([^"]+)"', html)
    assert len(uris) == 3
    for uri, stem in zip(
        uris, ("paged_in_over_lower_bound-by-workload_oversubscription", "frame-stalls", "occupancy"), strict=True
    ):
        assert base64.b64decode(uri) == (root / "figures" / f"{stem}.svg").read_bytes()
    assert "27 runs · 26 ok · 1 failed" in html
    # the grid
    assert "<td>policy</td><td>lru, clock, opt</td>" in html
    assert (
        "<td>workload.oversubscription</td><td>1.1, 1.5, 2.0</td>" in html and "<td>seeds</td><td>1, 2, 3</td>" in html
    )
    # the summary: lru at 2.0 from seeds 1 and 3: 4.1 and 4.3, mean 4.2, half = 12.706205 · 0.141421 / 1.414214 = 1.27
    assert (
        "<td>lru</td><td class=n>2.0</td><td class=n>4.2</td><td class=n>± 1.27</td><td class=n>2</td><td class=n>2</td><td class=n>1</td>"
        in html
    )
    # opt at 1.1: 1.2, 1.3, 1.4: mean 1.3, s 0.1, half = 4.302653 · 0.1 / √3 = 0.248
    assert (
        "<td>opt</td><td class=n>1.1</td><td class=n>1.3</td><td class=n>± 0.248</td><td class=n>3</td><td class=n>3</td><td class=n>0</td>"
        in html
    )
    # the failed run, with its error
    failed_id = ids[FAILED]
    assert (
        f"<td>{failed_id}</td><td>2</td><td>policy=lru, workload.oversubscription=2.0</td><td>RuntimeError: no victim for lru</td>"
        in html
    )
    assert "Failed runs (1)" in html


def test_a_single_seed_has_no_band_and_says_so(tmp_path: Path) -> None:
    make_sweep(tmp_path, SweepSpec(policies=("lru", "opt"), seeds=(7,)))
    plot_sweep(tmp_path, PlotOptions(formats=("svg",)))
    metric = (tmp_path / "figures/paged_in_over_lower_bound-by-workload_oversubscription.svg").read_text()
    assert "lru (1 seed: no band)" in metric and "opt (1 seed: no band)" in metric
    assert not list((tmp_path / "figures").glob("*.png")), "only the formats asked for"
    assert "figures/occupancy.svg</span>" in (tmp_path / "report.html").read_text()
    html = (tmp_path / "report.html").read_text()
    # lru at 1.5, seed 7: 2·1.5 + 0.7 = 3.7, no interval
    assert "<td>lru</td><td class=n>1.5</td><td class=n>3.7</td><td class=n>—</td><td class=n>1</td>" in html


def test_runs_without_frames_get_a_note_not_a_crash(tmp_path: Path) -> None:
    make_sweep(tmp_path, SweepSpec(frames=None))
    written = plot_sweep(tmp_path, PlotOptions(formats=("svg",)))
    assert len(written) == 4
    for name in ("frame-stalls.svg", "occupancy.svg"):
        assert escape(NO_FRAMES, quote=False) in (tmp_path / "figures" / name).read_text()


def test_the_output_is_the_same_bytes_when_drawn_twice(
    tmp_path: Path, swept: tuple[Path, list[Path], dict[tuple[str, float, int], str]]
) -> None:
    root, written, _ = swept
    copy = tmp_path / "copy"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns("figures", "report.html"))
    again = write_sweep_report(copy)
    assert [p.relative_to(copy) for p in again] == [p.relative_to(root) for p in written]
    for first, second in zip(written, again, strict=True):
        assert first.read_bytes() == second.read_bytes(), first.name


def test_options_choose_the_axes_and_the_runs(tmp_path: Path) -> None:
    ids = make_sweep(tmp_path)
    chosen = (ids[("opt", 1.1, 3)], ids[("lru", 1.5, 2)])
    p = plan(load_sweep(tmp_path), PlotOptions(x="policy", y="paged_in_bytes", runs=chosen))
    assert p.x == "policy" and not p.x_numeric and p.x_values == ["lru", "clock", "opt"]
    assert p.series_keys == ["workload.oversubscription"]
    assert p.series == [
        "workload.oversubscription=1.1",
        "workload.oversubscription=1.5",
        "workload.oversubscription=2.0",
    ]
    assert [r.id for r in p.occupancy_runs] == list(chosen)
    plot_sweep(tmp_path, PlotOptions(x="policy", y="paged_in_bytes", runs=chosen, formats=("svg",)))
    metric = (tmp_path / "figures/paged_in_bytes-by-policy.svg").read_text()
    assert "paged_in_bytes (MiB)" in metric and "eviction policy" in metric
    assert "workload.oversubscription=1.5" in metric


@pytest.mark.parametrize(
    ("options", "option", "fragment"),
    [
        (PlotOptions(x="nope"), "--x", "must be a column of results.csv"),
        (PlotOptions(x="status"), "--x", "must be a column of results.csv"),
        (PlotOptions(y="nope"), "--y", "no such column"),
        (PlotOptions(y="driver_model"), "--y", "is not a numeric metric column"),
        (PlotOptions(runs=("0123456789abcdef",)), "--runs", "is no run of this sweep"),
        (PlotOptions(formats=("pdf",)), "--format", "must be one of png, svg"),
        (PlotOptions(formats=()), "--format", "at least one"),
    ],
)
def test_bad_options_are_refused_naming_the_option(
    options: PlotOptions, option: str, fragment: str, tmp_path: Path
) -> None:
    make_sweep(tmp_path, SweepSpec(policies=("lru",), xs=(1.5,), seeds=(1,)))
    with pytest.raises(ConfigurationError) as caught:
        plot_sweep(tmp_path, options)
    assert caught.value.setting == option and fragment in caught.value.rule
    assert not (tmp_path / "figures").exists() and not (tmp_path / "report.html").exists(), "nothing written"


def test_a_failed_run_cannot_be_chosen_for_occupancy(tmp_path: Path) -> None:
    ids = make_sweep(tmp_path, SweepSpec(failed={FAILED}))
    with pytest.raises(ConfigurationError, match="failed") as caught:
        plan(load_sweep(tmp_path), PlotOptions(runs=(ids[FAILED],)))
    assert caught.value.setting == "--runs"


def test_nan_and_empty_cells_are_no_value(tmp_path: Path) -> None:
    make_sweep(
        tmp_path,
        SweepSpec(policies=("lru",), xs=(1.5,), seeds=(1, 2), metric=lambda p, x, s: math.nan if s == 2 else 3.0),
    )
    p = plan(load_sweep(tmp_path), PlotOptions())
    point = p.points[("lru", "1.5")]
    assert (point.values, point.ok, point.failed) == ([3.0], 2, 0)


def test_a_users_words_in_a_figure_are_text_with_the_controls_shown_escaped(tmp_path: Path) -> None:
    """A scenario named with ``$...$`` is no formula (an unknown ``\\command`` was a ValueError traceback after the
    whole sweep had run), and a control character is no glyph (a warning carrying it raw to the terminal) and no
    XML (an SVG no browser opens): each prints as text, the controls as escapes (decision 0247)."""
    scenario = "s$\\nosuch{$ \x1b[31m\u202e"
    make_sweep(tmp_path, SweepSpec(scenario=scenario, policies=("lru", "a$x$\x07"), seeds=(1,)))
    plot_sweep(tmp_path, PlotOptions(formats=("svg",)))  # warnings are errors here: none was raised
    for svg in (tmp_path / "figures").glob("*.svg"):
        document = minidom.parse(str(svg))  # well-formed XML
        texts = "".join(node.data for node in _text_nodes(document))
        assert "s$\\nosuch{$ \\x1b[31m\\u202e" in texts, svg.name
    metric = (tmp_path / "figures/paged_in_over_lower_bound-by-workload_oversubscription.svg").read_text()
    assert "a$x$\\x07 (1 seed: no band)" in metric


def _text_nodes(node: minidom.Node) -> list[minidom.Text]:
    found = [node] if isinstance(node, minidom.Text) else []
    for child in node.childNodes:
        found += _text_nodes(child)
    return found
