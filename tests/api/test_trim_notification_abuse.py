"""Hostile callers of the pressure calls (issue 23): trim-notification callbacks that raise, re-enter, unregister
themselves or outlive their device; values of the wrong type (decision 0186)."""

from __future__ import annotations

from typing import Any

import pytest

from wddmsim.ddi.residency import (
    D3DDDI_TRIMRESIDENCYSET_FLAGS,
    D3DKMT_MEMORY_SEGMENT_GROUP,
    D3DKMT_REGISTERTRIMNOTIFICATION,
    D3DKMT_TRIMNOTIFICATION,
    D3DKMT_UNREGISTERTRIMNOTIFICATION,
)
from wddmsim.ddi.status import DdiError
from wddmsim.vidmm.events import VidMmTrimNotification

from .desk import Desk, KiB

LOCAL = D3DKMT_MEMORY_SEGMENT_GROUP.D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL
TRIM = D3DDDI_TRIMRESIDENCYSET_FLAGS(TrimToBudget=True)


def register(process: Any, device: Any, callback: Any, context: object = None) -> D3DKMT_REGISTERTRIMNOTIFICATION:
    args = D3DKMT_REGISTERTRIMNOTIFICATION(hDevice=device.handle, Callback=callback, Context=context)
    process.register_trim_notification(args)
    return args


def test_a_callback_that_raises_does_not_cost_another_process_its_notification() -> None:
    desk = Desk()
    other, device, _ = desk.other()
    got: list[D3DKMT_TRIMNOTIFICATION] = []

    def boom(_: D3DKMT_TRIMNOTIFICATION) -> None:
        raise RuntimeError("the application's callback crashed")

    register(desk.process, desk.device, boom)
    register(other, device, got.append, "theirs")
    runtime = desk.adapter.runtime
    runtime.request_trim(desk.process, TRIM)
    runtime.request_trim(other, TRIM)
    with pytest.raises(RuntimeError, match="crashed"):
        runtime.deliver_trim_notifications()
    assert [n.Context for n in got] == ["theirs"], "the other process was told all the same"
    assert [e.delivered for e in desk.adapter.events.of_type(VidMmTrimNotification)] == [1, 1]
    assert not runtime.trim_notifications_due()
    desk.check()


def test_a_callback_may_unregister_itself_evict_make_resident_and_ask_again() -> None:
    desk = Desk()
    buffer = desk.buffer(64 * KiB, usage=0)
    desk.resident(buffer)
    runtime = desk.adapter.runtime
    calls: list[int] = []
    args = D3DKMT_REGISTERTRIMNOTIFICATION(hDevice=desk.device.handle)

    def callback(notification: D3DKMT_TRIMNOTIFICATION) -> None:
        calls.append(notification.Flags.Value)
        desk.process.unregister_trim_notification(
            D3DKMT_UNREGISTERTRIMNOTIFICATION(Handle=args.Handle, Callback=callback)
        )
        desk.evict(buffer)
        desk.resident(buffer)
        runtime.request_trim(desk.process, TRIM)
        assert runtime.deliver_trim_notifications() == 0, "unregistered: nobody to tell"

    args.Callback = callback
    desk.process.register_trim_notification(args)
    runtime.request_trim(desk.process, TRIM)
    assert runtime.deliver_trim_notifications() == 1
    assert calls == [TRIM.Value]
    assert desk.process.process.trim_callbacks == {}
    desk.check()


def test_a_registration_goes_with_its_device() -> None:
    desk = Desk()
    got: list[D3DKMT_TRIMNOTIFICATION] = []
    device = desk.process.create_device()
    register(desk.process, device, got.append)
    kept = register(desk.process, desk.device, got.append, "kept")
    desk.process.destroy_device(device)
    assert list(desk.process.process.trim_callbacks) == [kept.Handle]
    desk.adapter.runtime.request_trim(desk.process, TRIM)
    assert desk.adapter.runtime.deliver_trim_notifications() == 1
    assert [n.Context for n in got] == ["kept"]
    desk.check()


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda d: d.adapter.runtime.set_scheduling_priority_class(d.process, True), "Priority"),
        (lambda d: d.adapter.runtime.impose_budget(d.process, LOCAL, True), "Budget"),
        (lambda d: d.adapter.runtime.set_focus(d.process, "no"), "foreground"),
        (lambda d: d.adapter.runtime.request_trim(d.process, D3DDDI_TRIMRESIDENCYSET_FLAGS()), "Flags"),
    ],
    ids=["priority-bool", "budget-bool", "focus-str", "trim-nothing"],
)
def test_a_value_of_the_wrong_kind_is_refused_and_changes_nothing(call: Any, argument: str) -> None:
    desk = Desk()
    process = desk.process.process
    before = (process.priority_class, process.foreground, dict(process.budgets), len(desk.adapter.events))
    with pytest.raises(DdiError) as error:
        call(desk)
    assert str(error.value).startswith(f"{argument}=")
    assert (process.priority_class, process.foreground, dict(process.budgets), len(desk.adapter.events)) == before
    assert not desk.adapter.runtime.trim_notifications_due()
