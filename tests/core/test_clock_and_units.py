"""The simulated clock is deterministic; sizes parse and align as documented."""

from __future__ import annotations

import pytest

from wddmsim.core import liveness
from wddmsim.core.clock import Clock
from wddmsim.core.units import GiB, KiB, MiB, align_down, align_up, format_size, parse_size


def test_callbacks_run_in_time_order_and_ties_in_scheduling_order() -> None:
    clock = Clock()
    seen: list[str] = []
    clock.schedule(20, lambda: seen.append("b"))
    clock.schedule(10, lambda: seen.append("a"))
    clock.schedule(20, lambda: seen.append("c"))
    clock.run_all()
    assert seen == ["a", "b", "c"]
    assert clock.now == 20


def test_time_never_goes_backwards_and_run_until_stops_when_idle() -> None:
    clock = Clock()
    clock.advance_to(100)
    clock.schedule(50, lambda: None)  # in the past: runs "now"
    assert clock.next_time == 100
    assert clock.run_until(lambda: False) is False
    assert clock.now == 100


@pytest.mark.parametrize(
    ("text", "value"),
    [("4096", 4096), ("64KiB", 64 * KiB), ("64K", 64 * KiB), ("256MiB", 256 * MiB), ("80GiB", 80 * GiB), ("1gb", GiB)],
)
def test_parse_size(text: str, value: int) -> None:
    assert parse_size(text) == value


def test_parse_size_rejects_nonsense_with_the_text() -> None:
    with pytest.raises(ValueError, match="'lots'"):
        parse_size("lots")


def test_alignment_helpers() -> None:
    assert align_up(4097, 4096) == 8192
    assert align_down(4097, 4096) == 4096
    assert format_size(64 * KiB) == "64 KiB"
    assert format_size(3) == "3 B"


def test_clock_steps_are_charged_only_while_a_liveness_budget_is_armed() -> None:
    clock = Clock()
    ran: list[int] = []
    for at in (5, 7, 9, 11):
        clock.schedule(at, lambda at=at: ran.append(at))  # type: ignore[misc]
    harness = liveness.BUDGET.budget, liveness.BUDGET.remaining  # the test harness's budget, put back below
    liveness.disarm()
    try:
        assert clock.step() and clock.step()
        assert liveness.used() is None, "nothing counted without a budget"
        with liveness.armed(1):
            assert clock.step()
            assert liveness.used() == 1
            with pytest.raises(liveness.LivenessBudgetExceeded, match=r"in Clock\.step") as spent:
                clock.step()
        assert spent.value.where == "Clock.step"
    finally:
        liveness.BUDGET.budget, liveness.BUDGET.remaining = harness
    assert ran == [5, 7, 9], "the step that found the budget spent ran nothing"
    assert clock.now == 9 and clock.pending == 1
