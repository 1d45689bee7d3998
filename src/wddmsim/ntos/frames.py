"""The page-frame allocator: free frames kept as sorted, coalesced runs."""

from __future__ import annotations

import bisect
from typing import final

import numpy as np
import numpy.typing as npt


class OutOfFrames(MemoryError):
    """No (contiguous) run of free frames large enough."""


@final
class FrameAllocator:
    """Hands out frame numbers in ``[first, first + count)``; lowest addresses first, deterministically."""

    __slots__ = ("_counts", "_starts", "free_frames", "total_frames")

    def __init__(self, first: int, count: int) -> None:
        self._starts = [first]
        self._counts = [count]
        self.free_frames = count
        self.total_frames = count

    def allocate(self, count: int) -> npt.NDArray[np.uint64]:
        """``count`` frames, not necessarily contiguous (taken run by run from the lowest free ones)."""
        if count <= 0 or count > self.free_frames:
            raise OutOfFrames(f"{count} frame(s) requested, {self.free_frames} free")
        pieces: list[npt.NDArray[np.uint64]] = []
        need = count
        while need:
            start, run = self._starts[0], self._counts[0]
            take = min(run, need)
            pieces.append(np.arange(start, start + take, dtype=np.uint64))
            if take == run:
                del self._starts[0], self._counts[0]
            else:
                self._starts[0] += take
                self._counts[0] -= take
            need -= take
        self.free_frames -= count
        return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)

    def allocate_chunks(self, count: int, chunk: int) -> npt.NDArray[np.uint64]:
        """``count`` frames (a multiple of ``chunk``) as runs of ``chunk`` contiguous frames, each starting on a
        multiple of ``chunk`` (``MmAllocatePagesForMdlEx`` with contiguous chunks: pages a GPU maps by pages
        larger than 4 KiB); lowest addresses first.  Nothing is taken if they cannot all be found."""
        if chunk <= 1:
            return self.allocate(count)
        if count <= 0 or count % chunk or count > self.free_frames:
            raise OutOfFrames(f"{count} frame(s) in chunks of {chunk} requested, {self.free_frames} free")
        starts: list[int] = []
        for start, run in zip(self._starts, self._counts, strict=True):
            first = -(-start // chunk) * chunk
            while first + chunk <= start + run and len(starts) * chunk < count:
                starts.append(first)
                first += chunk
            if len(starts) * chunk == count:
                break
        if len(starts) * chunk < count:
            raise OutOfFrames(f"no {count // chunk} aligned run(s) of {chunk} free frame(s)")
        for first in starts:
            self._take(first, chunk)
        self.free_frames -= count
        out: npt.NDArray[np.uint64] = np.repeat(np.asarray(starts, dtype=np.uint64), chunk) + np.tile(
            np.arange(chunk, dtype=np.uint64), len(starts)
        )
        return out

    def _take(self, first: int, count: int) -> None:
        """Remove ``[first, first + count)`` from the free run holding it."""
        i = bisect.bisect_right(self._starts, first) - 1
        start, run = self._starts[i], self._counts[i]
        del self._starts[i], self._counts[i]
        after = start + run - (first + count)
        if after:
            self._starts.insert(i, first + count)
            self._counts.insert(i, after)
        if first > start:
            self._starts.insert(i, start)
            self._counts.insert(i, first - start)

    def allocate_contiguous(self, count: int) -> int:
        """The first frame of ``count`` physically contiguous frames (first fit)."""
        for i, run in enumerate(self._counts):
            if run >= count:
                start = self._starts[i]
                if run == count:
                    del self._starts[i], self._counts[i]
                else:
                    self._starts[i] += count
                    self._counts[i] -= count
                self.free_frames -= count
                return start
        raise OutOfFrames(f"no run of {count} contiguous free frame(s)")

    def free(self, frames: npt.NDArray[np.uint64]) -> None:
        """Return frames (any order); runs are merged with their neighbours."""
        if frames.shape[0] == 0:
            return
        ordered = np.sort(frames.astype(np.int64))
        breaks = np.flatnonzero(np.diff(ordered) != 1) + 1
        starts = np.concatenate(([0], breaks))
        counts = np.diff(np.concatenate((starts, [ordered.shape[0]])))
        for start, run in zip(ordered[starts].tolist(), counts.tolist(), strict=True):
            self._insert(int(start), int(run))
        self.free_frames += int(frames.shape[0])

    def _insert(self, start: int, count: int) -> None:
        i = bisect.bisect_left(self._starts, start)
        if i < len(self._starts) and self._starts[i] < start + count:
            raise ValueError(f"frames {start:#x}+{count} are already free")
        if i > 0 and self._starts[i - 1] + self._counts[i - 1] > start:
            raise ValueError(f"frames {start:#x}+{count} are already free")
        merge_left = i > 0 and self._starts[i - 1] + self._counts[i - 1] == start
        merge_right = i < len(self._starts) and start + count == self._starts[i]
        if merge_left and merge_right:
            self._counts[i - 1] += count + self._counts[i]
            del self._starts[i], self._counts[i]
        elif merge_left:
            self._counts[i - 1] += count
        elif merge_right:
            self._starts[i] = start
            self._counts[i] += count
        else:
            self._starts.insert(i, start)
            self._counts.insert(i, count)

    @property
    def runs(self) -> list[tuple[int, int]]:
        return list(zip(self._starts, self._counts, strict=True))
