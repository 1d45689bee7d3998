"""The timeline played during a run: focus, priorities, budgets, processes starting and exiting, trim requests and
sleep, at the start of their frames (:mod:`~wddmsim.scenarios.timeline` reads them).

What it models: the OS and the user acting on running applications.  Every action goes through the runtime
(``TracedRuntime``: recorded and replayed like the applications' calls).  Trim notifications are delivered after
each process's frame -- between calls, as DxgKrnl's notification worker runs beside the application's threads.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

import numpy as np

from wddmsim.ddi.residency import D3DDDI_TRIMRESIDENCYSET_FLAGS
from wddmsim.scenarios.app import App
from wddmsim.scenarios.config import ScenarioConfig
from wddmsim.scenarios.fit import check_fits
from wddmsim.scenarios.held import LOCAL, NON_LOCAL
from wddmsim.scenarios.model import Model
from wddmsim.scenarios.record import TracedRuntime
from wddmsim.scenarios.result import Check
from wddmsim.scenarios.timeline import TimelineEvent
from wddmsim.scenarios.verify import verify
from wddmsim.scenarios.workload import frames
from wddmsim.system import Adapter

Exited = Callable[[App, list[Check]], None]
"""Told of each process that exited, with its verification's checks."""


class Timeline:
    """Plays ``config.timeline`` on a run's applications."""

    def __init__(
        self,
        config: ScenarioConfig,
        runtime: TracedRuntime,
        model: Model,
        adapter: Adapter,
        apps: list[App],
        plans: list[Iterator[list[int]]],
        exited: Exited,
    ) -> None:
        self.config = config
        self.runtime = runtime
        self.model = model
        self.adapter = adapter
        self.apps = apps
        self.plans = plans
        self.exited = exited

    def at(self, frame: int) -> None:
        """The events of ``frame``, in their order; then the notifications they caused."""
        for event in self.config.timeline:
            if event.frame == frame:
                self._play(event)
        self.deliver()

    def deliver(self) -> None:
        self.runtime.deliver_trim_notifications()

    def _app(self, event: TimelineEvent) -> App:
        assert event.process is not None  # the timeline was checked: a named process is running
        return self.apps[event.process]

    def _play(self, e: TimelineEvent) -> None:
        match e.event:
            case "focus":
                app = self._app(e)
                if e.foreground:
                    self._take_focus(app)
                else:
                    self.runtime.set_focus(app.process, False)
                app.paused = not e.foreground
                app.client.on_focus(e.foreground)
            case "priority":
                self.runtime.set_scheduling_priority_class(self._app(e).process, e.priority)
            case "budget":
                app = self._app(e)
                for group, value in ((LOCAL, e.local), (NON_LOCAL, e.non_local)):
                    if value is not None:
                        self.runtime.impose_budget(app.process, group, None if value < 0 else value)
            case "start":
                self._start(e)
            case "exit":
                self.exit(self._app(e))
            case "trim":
                flags = D3DDDI_TRIMRESIDENCYSET_FLAGS(
                    TrimToBudget=e.flags == "trim-to-budget", PeriodicTrim=e.flags == "periodic"
                )
                targets = [self._app(e)] if e.process is not None else [a for a in self.apps if a.alive]
                for app in targets:
                    self.runtime.request_trim(app.process, flags)
            case "sleep":
                self.runtime.power_transition(e.kind)

    def _start(self, e: TimelineEvent) -> None:
        """A newcomer: ``bytes`` of resources, used frame by frame as the workload's access pattern says."""
        index = len(self.apps)
        w = self.config.workload
        workload = dataclasses.replace(
            w,
            processes=1,
            oversubscription=e.bytes / self.config.adapter.vram,
            persistent_locks=0,
            tiles=0,
        )
        # Its own resources, never a capture's: a capture sizes the workload by its heaps (decision 0188).
        config = dataclasses.replace(self.config, workload=workload, capture=None)
        app = App(
            self.runtime,
            config,
            index,
            self.model,
            umd=self.adapter.umd,
            capabilities=self.adapter.capabilities,
            client=e.client,
        )
        check_fits(self.adapter, [app])
        self.apps.append(app)
        self.plans.append(frames(config, len(app.resources), np.random.default_rng([self.config.seed, index, 1])))
        if e.foreground:
            self._take_focus(app)

    def _take_focus(self, app: App) -> None:
        """``app`` gets the foreground; whoever had it loses it in VidMm's weighting (one foreground) but keeps
        running (a window behind another still renders)."""
        for other in self.apps:
            if other is not app and other.alive and other.process.process.process.foreground:
                self.runtime.set_focus(other.process, False)
        self.runtime.set_focus(app.process, True)

    def exit(self, app: App) -> None:
        """The process verifies what it holds, frees it, and exits."""
        checks = verify(app)
        app.destroy()
        app.process.close()  # the process exits: what it still holds (contexts, queues, fences, VAs) goes
        app.alive = False
        self.exited(app, checks)
