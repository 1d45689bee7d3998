"""Python executors the tests name in adapter descriptions (``class = "tests.drivers.native.executors:X"``)."""

from __future__ import annotations

from typing import ClassVar

from wddmsim.hw.services import GpuServices


class Recorder:
    """Carries out nothing; records what each paging buffer brought (the submitted range and private data)."""

    seen: ClassVar[list[tuple[bytes, bytes | None, int]]] = []

    def __call__(
        self, buffer: memoryview | bytes, private_data: memoryview | bytes | None, services: GpuServices
    ) -> int | None:
        kept = None if private_data is None else bytes(private_data)
        Recorder.seen.append((bytes(buffer), kept, services.local_size))
        return None


class Exploder:
    """Fails on the first buffer, as a buggy executor would."""

    def __call__(
        self, buffer: memoryview | bytes, private_data: memoryview | bytes | None, services: GpuServices
    ) -> int | None:
        raise RuntimeError("softlog record 0 is corrupt")


class OutOfBounds:
    """Writes past the end of local memory through the services."""

    def __call__(
        self, buffer: memoryview | bytes, private_data: memoryview | bytes | None, services: GpuServices
    ) -> int | None:
        services.write_local(services.local_size - 4, b"\0" * 8)
        return None


NOT_A_CLASS = 42


class NeedsArguments:
    def __init__(self, colour: str) -> None:
        self.colour = colour


class NotCallable:
    """A class whose instances are not executors."""


class Counter:
    """Counts the buffers it is handed and keeps their bytes; carries out nothing."""

    buffers: ClassVar[list[bytes]] = []

    def __call__(
        self, buffer: memoryview | bytes, private_data: memoryview | bytes | None, services: GpuServices
    ) -> int | None:
        Counter.buffers.append(bytes(buffer))
        return None
