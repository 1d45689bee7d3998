"""Decision 0091: only the documents' own managers are called "manager"; the other parts are named for what they
hold, and the old names are gone (no compatibility alias keeps them alive unseen)."""

from __future__ import annotations

import importlib

import pytest

from wddmsim.vidmm.cpu.locks import AllocationLocks
from wddmsim.vidmm.power import AdapterPower
from wddmsim.vidmm.vaspace import GpuVaSpaces

from .world import World


def test_the_composition_holds_its_parts_under_their_names() -> None:
    w = World()
    assert isinstance(w.vidmm.va, GpuVaSpaces)
    assert isinstance(w.vidmm.locks, AllocationLocks)
    assert isinstance(w.vidmm.power, AdapterPower)


@pytest.mark.parametrize(
    ("module", "old"),
    [
        ("wddmsim.vidmm.vaspace", "VaManager"),
        ("wddmsim.vidmm.vaspace.spaces", "VaManager"),
        ("wddmsim.vidmm.cpu.locks", "LockManager"),
        ("wddmsim.vidmm.power", "PowerManager"),
    ],
)
def test_the_old_names_are_gone(module: str, old: str) -> None:
    assert not hasattr(importlib.import_module(module), old)
