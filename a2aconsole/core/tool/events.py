"""The tool's events: each built with the clock's time and scrubbed for its workspace before the sink sees it.

A sink that fails loses a live update, never the answer: `emit` logs and goes on.
"""

from __future__ import annotations

import logging
from typing import Any

from a2aconsole.core.clock import Clock
from a2aconsole.core.events import ERROR, Event, EventSink
from a2aconsole.core.files import Workspace
from a2aconsole.core.scrubber import Scrubbers

log = logging.getLogger(__name__)


class ToolEvents:
    """Emits the tool's events to a sink (none: nothing happens)."""

    def __init__(self, sink: EventSink | None, clock: Clock, scrubbers: Scrubbers) -> None:
        self.sink = sink
        self.clock = clock
        self.scrubbers = scrubbers

    async def emit(
        self,
        kind: str,
        workspace: Workspace,
        target: str,
        agent: str,
        task_id: str,
        context_id: str,
        *,
        state: str = "",
        text: str = "",
        data: dict[str, Any] | None = None,
    ) -> None:
        if self.sink is None:
            return
        try:
            event = Event(
                kind=kind,
                workspace=str(workspace.root),
                agent=agent,
                task_id=task_id,
                at=self.clock.now(),
                context_id=context_id,
                target=target,
                state=state,
                text=text,
                data=data or {},
            )
            await self.sink.emit(self.scrubbers.for_workspace(workspace).event(event))
        except Exception:
            log.exception("event sink failed for %s", kind)

    async def error(self, workspace: Workspace, target: str, agent: str, args: dict[str, Any], message: str) -> None:
        """A failed call, as an `error` event of the target's workspace."""
        task_id = args.get("taskId") if isinstance(args.get("taskId"), str) else ""
        await self.emit(ERROR, workspace, target, agent, task_id or "", "", data={"message": message})
