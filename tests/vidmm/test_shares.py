"""The OS's sharing of a segment group among processes (decision 0169): exact budgets, table-driven."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wddmsim.vidmm.policy.shares import Claim, budgets, weight

MiB = 1 << 20


def test_each_class_weighs_twice_the_one_below_and_the_foreground_doubles_it() -> None:
    assert [weight(c, False) for c in range(6)] == [1, 2, 4, 8, 16, 32]
    assert weight(2, True) == 8


@pytest.mark.parametrize(
    ("claims", "want"),
    [
        # No pressure: nothing imposed, every budget is the capacity.
        ([Claim(4, 10 * MiB), Claim(4, 20 * MiB)], [64 * MiB, 64 * MiB]),
        # Pressure, equal weights: each its half; the small user may grow to the level.
        ([Claim(4, 48 * MiB), Claim(4, 48 * MiB)], [32 * MiB, 32 * MiB]),
        ([Claim(4, 8 * MiB), Claim(4, 70 * MiB)], [56 * MiB, 56 * MiB]),
        # The foreground weighs double: two thirds against one third.
        ([Claim(8, 60 * MiB), Claim(4, 60 * MiB)], [int(64 * MiB * 2 / 3), int(64 * MiB / 3)]),
        # A reservation is a floor.
        ([Claim(4, 60 * MiB, reservation=40 * MiB), Claim(4, 60 * MiB)], [40 * MiB, 32 * MiB]),
        # An imposed budget overrides the model, and its process demands at most that.
        ([Claim(4, 60 * MiB, imposed=0), Claim(4, 60 * MiB)], [0, 64 * MiB]),
        ([Claim(4, 60 * MiB, imposed=16 * MiB), Claim(4, 60 * MiB)], [16 * MiB, 48 * MiB]),
    ],
    ids=["no-pressure", "halves", "small-grows", "foreground", "reservation", "imposed-0", "imposed-16"],
)
def test_budgets(claims: list[Claim], want: list[int]) -> None:
    assert budgets(64 * MiB, claims) == want


def test_under_pressure_the_demands_up_to_the_level_add_up_to_the_capacity() -> None:
    claims = [Claim(w, u * MiB) for w, u in ((1, 5), (2, 30), (4, 40), (8, 50))]
    got = budgets(100 * MiB, claims)
    met = sum(min(c.usage, b) for c, b in zip(claims, got, strict=True))
    assert 100 * MiB - len(claims) <= met <= 100 * MiB  # integer truncation only


claims_st = st.lists(
    st.builds(
        Claim,
        weight=st.sampled_from([1, 2, 4, 8, 16, 32, 64]),
        usage=st.integers(0, 128 * MiB),
        reservation=st.integers(0, 8 * MiB),
        imposed=st.one_of(st.none(), st.integers(0, 64 * MiB)),
    ),
    min_size=1,
    max_size=8,
)


@given(claims_st)
def test_the_sharing_rules_hold_for_any_claims(claims: list[Claim]) -> None:
    capacity = 64 * MiB
    got = budgets(capacity, claims)
    demands = [
        min(max(c.usage, c.reservation), c.imposed) if c.imposed is not None else max(c.usage, c.reservation)
        for c in claims
    ]
    for c, b in zip(claims, got, strict=True):
        if c.imposed is not None:
            assert b == c.imposed
        else:
            assert min(c.reservation, capacity) <= b <= capacity
    if sum(demands) <= capacity:
        assert all(b == capacity for c, b in zip(claims, got, strict=True) if c.imposed is None)
    else:
        # Under pressure the level is set so that the demands it meets use the capacity, up to truncation.
        met = sum(min(d, max(b, 0)) for d, b in zip(demands, got, strict=True))
        assert met >= capacity - len(claims) - sum(c.reservation for c in claims)


@given(claims_st, st.integers(0, 7))
def test_more_weight_never_means_less_budget(claims: list[Claim], which: int) -> None:
    i = which % len(claims)
    heavier = list(claims)
    heavier[i] = Claim(claims[i].weight * 2, claims[i].usage, claims[i].reservation, claims[i].imposed)
    assert budgets(64 * MiB, heavier)[i] >= budgets(64 * MiB, claims)[i]
