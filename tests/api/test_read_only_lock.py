"""What a ``ReadOnly`` lock (``D3DDDICB_LOCKFLAGS.ReadOnly``, ``pfnLockCb``) does with a write (decision 0050)."""

from __future__ import annotations

import pytest

from wddmsim.ddi.status import HRESULT, InvalidArgument
from wddmsim.kmd.config import DriverModel
from wddmsim.testing import campaign
from wddmsim.testing.campaign import Outcome

from .desk import Desk, KiB, pattern


@pytest.mark.any_driver
@pytest.mark.parametrize("model", [DriverModel.WDDM2, DriverModel.WDDM1], ids=lambda m: m.name)
def test_a_cpu_write_through_a_read_only_lock_is_refused_and_writes_nothing(model: DriverModel) -> None:
    d = Desk(model=model)
    h = d.buffer(64 * KiB)
    data = pattern(64 * KiB, 7)
    d.cpu_write(d.lock(h).pData, data)
    d.unlock(h)
    view = d.lock(h, ReadOnly=True).pData
    before = d.adapter.footprint()
    for offset, size in ((0, 1), (64 * KiB - 1, 1), (4 * KiB, 8 * KiB)):
        with pytest.raises(InvalidArgument) as refused:
            d.process.cpu_write(view + offset, bytes(size))
        assert refused.value.argument == "address" and refused.value.status == HRESULT.E_INVALIDARG
        assert "ReadOnly" in refused.value.rule
        campaign.record("runtime", Outcome.REFUSED)
    assert (d.cpu_read(view, 64 * KiB) == data).all()  # reads are what the lock is for
    with pytest.raises(InvalidArgument) as refused:
        d.lock(h)  # a second lock may not make a ReadOnly lock writable
    assert refused.value.argument == "Flags.ReadOnly"
    campaign.record("runtime", Outcome.REFUSED)
    assert d.adapter.footprint() == before
    d.check()
    d.unlock(h)
    view = d.lock(h).pData  # unlocked, then locked to write: writes land
    d.process.cpu_write(view, b"\xff")
    assert d.cpu_read(view, 2).tolist() == [0xFF, int(data[1])]
    d.unlock(h)
    d.check()
    d.process.close()
    assert d.adapter.footprint().leaks(d.start) == []
