"""NTSTATUS and HRESULT codes, and the errors that carry them.

A rejected call raises :class:`DdiError` (or a subclass) whose message names the argument, its value and the
rule broken, and whose ``status`` is the documented code.  ``DxgkDdiBuildPagingBuffer`` returns its three legal
statuses as values: they are protocol, not errors.
"""

from __future__ import annotations

from enum import IntEnum

from wddmsim.core.errors import WddmsimError


class NTSTATUS(IntEnum):
    """Kernel status codes (ntstatus.h; wddm-spec.md section 5.1)."""

    STATUS_SUCCESS = 0x00000000
    STATUS_PENDING = 0x00000103
    STATUS_UNSUCCESSFUL = 0xC0000001
    STATUS_NOT_IMPLEMENTED = 0xC0000002
    STATUS_INVALID_HANDLE = 0xC0000008
    STATUS_INVALID_PARAMETER = 0xC000000D
    STATUS_NO_MEMORY = 0xC0000017
    STATUS_ILLEGAL_INSTRUCTION = 0xC000001D
    STATUS_BUFFER_TOO_SMALL = 0xC0000023
    STATUS_INTEGER_OVERFLOW = 0xC0000095
    STATUS_PRIVILEGED_INSTRUCTION = 0xC0000096
    STATUS_NOT_SUPPORTED = 0xC00000BB
    STATUS_INVALID_USER_BUFFER = 0xC00000E8
    STATUS_POSSIBLE_DEADLOCK = 0xC0000194
    STATUS_DEVICE_REMOVED = 0xC00002B6
    STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER = 0xC01E0001
    STATUS_GRAPHICS_NO_VIDEO_MEMORY = 0xC01E0100
    STATUS_GRAPHICS_CANT_LOCK_MEMORY = 0xC01E0101
    STATUS_GRAPHICS_ALLOCATION_BUSY = 0xC01E0102
    STATUS_GRAPHICS_TOO_MANY_REFERENCES = 0xC01E0103
    STATUS_GRAPHICS_TRY_AGAIN_LATER = 0xC01E0104
    STATUS_GRAPHICS_TRY_AGAIN_NOW = 0xC01E0105
    STATUS_GRAPHICS_ALLOCATION_INVALID = 0xC01E0106
    STATUS_GRAPHICS_UNSWIZZLING_APERTURE_UNAVAILABLE = 0xC01E0107
    STATUS_GRAPHICS_UNSWIZZLING_APERTURE_UNSUPPORTED = 0xC01E0108
    STATUS_GRAPHICS_CANT_EVICT_PINNED_ALLOCATION = 0xC01E0109
    STATUS_GRAPHICS_INVALID_ALLOCATION_USAGE = 0xC01E0110
    STATUS_GRAPHICS_CANT_RENDER_LOCKED_ALLOCATION = 0xC01E0111
    STATUS_GRAPHICS_ALLOCATION_CLOSED = 0xC01E0112
    STATUS_GRAPHICS_INVALID_ALLOCATION_INSTANCE = 0xC01E0113
    STATUS_GRAPHICS_INVALID_ALLOCATION_HANDLE = 0xC01E0114
    STATUS_GRAPHICS_WRONG_ALLOCATION_DEVICE = 0xC01E0115
    STATUS_GRAPHICS_ALLOCATION_CONTENT_LOST = 0xC01E0116


def NT_SUCCESS(status: int) -> bool:
    """``NT_SUCCESS``: the severity bits say success or information (the top bit of the 32-bit code is clear)."""
    return not status & 0x80000000


BUILD_PAGING_BUFFER_STATUSES = frozenset(
    {
        NTSTATUS.STATUS_SUCCESS,
        NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER,
        NTSTATUS.STATUS_GRAPHICS_ALLOCATION_BUSY,
    }
)
"""The only statuses ``DxgkDdiBuildPagingBuffer`` may return; anything else is a critical failure."""


class HRESULT(IntEnum):
    """User-mode results (wddm-spec.md section 5.2; the standard winerror.h values)."""

    S_OK = 0x00000000
    E_PENDING = 0x8000000A
    E_OUTOFMEMORY = 0x8007000E
    E_INVALIDARG = 0x80070057
    D3DERR_WASSTILLDRAWING = 0x8876021C
    D3DERR_NOTAVAILABLE = 0x8876086A
    D3DDDIERR_DEVICEREMOVED = 0x88760870
    """``MAKE_D3DDDIHRESULT(2160)`` = ``MAKE_HRESULT(1, 0x876, 2160)``."""
    D3DDDIERR_PRIVILEGEDINSTRUCTION = 0x88760871
    """``MAKE_D3DDDIHRESULT(2161)``."""
    D3DDDIERR_INVALIDINSTRUCTION = 0x88760872
    """``MAKE_D3DDDIHRESULT(2162)`` (``D3DDDIERR_ILLEGALINSTRUCTION`` in the pfnRenderCb page)."""
    D3DDDIERR_INVALIDHANDLE = 0x88760873
    """``MAKE_D3DDDIHRESULT(2163)``."""
    D3DDDIERR_INVALIDUSERBUFFER = 0x88760879
    """``MAKE_D3DDDIHRESULT(2169)``."""
    D3DDDIERR_CANTEVICTPINNEDALLOCATION = 0xC0262109
    """``ERROR_GRAPHICS_CANT_EVICT_PINNED_ALLOCATION`` (winerror.h)."""
    D3DDDIERR_CANTRENDERLOCKEDALLOCATION = 0xC0262111
    """``ERROR_GRAPHICS_CANT_RENDER_LOCKED_ALLOCATION`` (winerror.h)."""


def status_name(code: int) -> str:
    for enum in (NTSTATUS, HRESULT):
        try:
            return enum(code).name
        except ValueError:
            continue
    return f"{code:#010x}"


class DdiError(WddmsimError):
    """A call rejected with a documented status; the state is exactly as before the call."""

    def __init__(self, status: NTSTATUS | HRESULT, message: str) -> None:
        super().__init__(f"{message} [{status.name} {int(status):#010x}]")
        self.status = status


class InvalidArgument(DdiError):
    """An argument breaks a documented rule: the message is ``<argument>=<value>: <rule>``."""

    def __init__(
        self, argument: str, value: object, rule: str, status: NTSTATUS | HRESULT = NTSTATUS.STATUS_INVALID_PARAMETER
    ) -> None:
        shown = f"{value:#x}" if isinstance(value, int) and not isinstance(value, bool) else repr(value)
        super().__init__(status, f"{argument}={shown}: {rule}")
        self.argument = argument
        self.value = value
        self.rule = rule
