"""A whole tree moving: evicted from its segment under memory pressure, restored, destroyed.

Tables move only while every context using them is idle: under memory pressure the tree of an idle process
leaves its segment (``UpdatePageTable`` with ``NotifyEviction``) and comes back -- at new places, parents and
roots re-pointed -- before the process uses it again (wddm-spec section 2.7; decision 0023).  Its entries are
rebuilt from VidMm's records (:mod:`.regions`), not copied.  A process that goes away has its tree freed after
one flush of every translation under its root.
"""

from __future__ import annotations

from typing import final

from wddmsim.vidmm.events import PageTablesEvicted, PageTablesRestored
from wddmsim.vidmm.vaspace.links import TableLinks
from wddmsim.vidmm.vaspace.regions import GpuVaSpace, ProcessTable
from wddmsim.vidmm.vaspace.tables import LEAF64


@final
class PageTables(TableLinks):
    """Places, reaches, writes, frees and moves the tables of every process's tree (the layers: :class:`.tables.TableBase`, :class:`.placement.TablePlacement`, :class:`.links.TableLinks`)."""

    def _free_tree(self, space: GpuVaSpace, tables: list[ProcessTable]) -> int:
        """Flush every translation under the root, then free ``tables`` (their entries already invalid where they
        had to be) and forget the tree's tables; returns the bytes freed."""
        self._flush_root(self.root_address(space))
        explicit, self.explicit_invalidation = self.explicit_invalidation, False  # invalidated by the caller
        try:
            for table in tables:
                self.free_table(table)
        finally:
            self.explicit_invalidation = explicit
        space.tables.clear()
        space.leaves64.clear()
        space.large.clear()
        return sum(t.size for t in tables)

    def destroy_tree(self, space: GpuVaSpace) -> int:
        """The process is gone (no context runs in ``space`` any more): every table of the tree is freed, after
        a flush of every translation under its root -- each table's entries invalidated first only when the
        driver asks for ``ExplicitPageTableInvalidation``.  An evicted tree has only records left.  Returns the
        bytes freed."""
        if space.evicted:
            space.saved.clear()
            return 0
        tables = self.all_tables(space)
        if self.explicit_invalidation:
            for table in tables:
                self.invalidate_all(table)
        freed = self._free_tree(space, tables)
        self.paging.wait(self.paging.flush())
        return freed

    def evict_tree(self, space: GpuVaSpace) -> int:
        """Memory pressure: the tree of an idle process leaves its segment; returns the bytes freed.

        Every context of the process is idle first (its work in flight completes).  Each table gets an
        ``UpdatePageTable`` with ``NotifyEviction`` that invalidates all its entries (which also satisfies
        ``ExplicitPageTableInvalidation``), the process's translations are flushed from the TLB, and the
        ranges are freed.  VidMm keeps its records; :meth:`ensure` rebuilds the tree from them.
        """
        assert not space.evicted
        assert not space.busy
        self.quiesce(space.process)
        if space.privileged is not None and not space.privileged.evicted:
            self.evict_tree(space.privileged)  # it maps these tables: it goes first, and comes back after
        tables = self.all_tables(space)
        for table in tables:
            self.invalidate_all(table, notify_eviction=True)
        saved = {k for k in space.tables if k[0] != self.top} | {(LEAF64, k) for k in space.leaves64}
        freed = self._free_tree(space, tables)
        space.saved = saved
        space.evicted = True
        space.suspended = False
        self.events.emit(
            PageTablesEvicted(
                time=self.events.clock.now, process=int(space.process.handle), tables=len(tables), bytes=freed
            )
        )
        return freed

    def ensure(self, space: GpuVaSpace) -> None:
        """The tree is in place: an evicted one comes back -- the root and every table it had placed again and
        initialised, every entry written from the records, the parents pointing at the new places -- and every
        context of the process is re-pointed at the new root (the contexts could not run meanwhile)."""
        self.stamp(space)
        if not space.evicted:
            return
        with self.hold(space):
            root = self._create(space, self.top, 0)  # still evicted: writes made meanwhile go to the records only
            space.evicted = False
            saved, space.saved = space.saved, set()
            space.tables[(self.top, 0)] = root
            self._initialise(root)
            for level, key in sorted(saved, key=lambda k: (-k[0], k[1])):
                if level == LEAF64:
                    self.leaf64(space, key * self.span1)
                elif level == 0:
                    self.leaf(space, key * self.span1)
                else:
                    self._attach(space, level, key)
            for region in sorted(space.regions.values(), key=lambda r: r.base):
                self.hooks.render(space, region.base, region.end)
            self.paging.wait(self.paging.flush())  # the tree is written before a context can walk it
            self.set_roots(space)
            if space.privileged is not None:
                self.ensure(space.privileged)
            self.events.emit(
                PageTablesRestored(
                    time=self.events.clock.now,
                    process=int(space.process.handle),
                    tables=len(space.tables) + len(space.leaves64),
                )
            )
