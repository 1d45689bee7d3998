"""``run_long``'s measurement of one length (issue 24): a fresh interpreter runs ``wddmsim run --out`` and says
what it took; the benchmark itself (100 and 2000 frames) is CI's, never the test suite's."""

from __future__ import annotations

from pathlib import Path

from wddmsim.bench.run_cases import _long_run


def test_one_length_is_measured_in_a_fresh_interpreter_and_its_outputs_removed(tmp_path: Path) -> None:
    took = _long_run(2, tmp_path)
    assert set(took) == {"seconds", "cpu_seconds", "max_rss_kib", "exit", "events"}
    assert took["exit"] == 0 and took["events"] > 1000
    assert took["max_rss_kib"] > 50 * 1024, "the child's own peak (the simulator's memory), in KiB"
    assert not (tmp_path / "out-2").exists() and (tmp_path / "took-2.json").exists()
