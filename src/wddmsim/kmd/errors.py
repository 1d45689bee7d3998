"""Errors the reference driver raises."""

from __future__ import annotations

from wddmsim.ddi.status import NTSTATUS, InvalidArgument


class DriverContractError(InvalidArgument):
    """The caller broke the DDI contract (a bugcheck on Windows); nothing was written."""

    def __init__(
        self, argument: str, value: object, rule: str, status: NTSTATUS = NTSTATUS.STATUS_INVALID_PARAMETER
    ) -> None:
        super().__init__(argument, value, rule, status)
