"""A2A tool test kit: a tool over a real shared httpx client, agents.json writing, a recording watch control.

`make_tool` plays the caller's part (the console, the API, the CLI): it resolves the test's one chat target,
`TARGET` over the test's workspace with its inbound hops, once, and passes that value on every call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx

from a2aconsole.core.chat import ChatTarget
from a2aconsole.core.clock import Clock
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.events import EventSink
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.records import WatchRecord
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.tool.tool import A2ATool
from a2aconsole.core.watches.control import PendingFileWatches
from tests.support.agents import TestAgent

TARGET = "chat-1"
SETTINGS = ClientSettings(wait_seconds=5, card_timeout_seconds=5, call_timeout=20)


def write_agents(workspace: Workspace, *entries: dict[str, Any]) -> None:
    workspace.save_agents(list(entries), None)


def entry(name: str, agent: TestAgent | str, **extra: Any) -> dict[str, Any]:
    url = agent if isinstance(agent, str) else agent.url
    return {"name": name, "url": url, **extra}


class RecordingWatches(PendingFileWatches):
    """The file-only watch control, recording what the tool asked of it."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    async def arm(self, workspace: Workspace, record: WatchRecord) -> None:
        self.calls.append(("arm", record.task_id))

    async def stop_watching(
        self, workspace: Workspace, target: str, agent: str, task_id: str, reason: str = "stopped"
    ) -> WatchRecord | None:
        self.calls.append(("stop", task_id))
        return await super().stop_watching(workspace, target, agent, task_id, reason)

    async def rearm(self, workspace: Workspace, record: WatchRecord) -> None:
        self.calls.append(("rearm", record.task_id))
        await super().rearm(workspace, record)


@dataclass
class TargetTool:
    """The tool and the test's chat target, resolved once: `run(action, args)` runs for `target`."""

    tool: A2ATool
    target: ChatTarget

    async def run(self, action: str, args: dict[str, Any] | None = None, target_id: str = TARGET) -> dict[str, Any]:
        assert target_id == self.target.id, f"this kit's tool serves {self.target.id!r} only"
        return await self.tool.run(action, args, self.target)

    def __getattr__(self, name: str) -> Any:  # the tool's parts (pool, watches, scrubbers)
        return getattr(self.tool, name)


def make_tool(
    http: httpx.AsyncClient,
    workspace: Workspace,
    *,
    clock: Clock | None = None,
    watches: Any = None,
    events: EventSink | None = None,
    hops: int = 0,
    private_paths: Sequence[Path] = (),
    **settings: Any,
) -> TargetTool:
    """The tool, with `TARGET` over `workspace` and `hops` inbound hops as its chat target."""
    s = replace(SETTINGS, **settings)
    remote = Remote(http, call_timeout=s.call_timeout, card_timeout=s.card_timeout_seconds)
    tool = A2ATool(remote, s, watches or RecordingWatches(), events=events, clock=clock, private_paths=private_paths)
    return TargetTool(tool, ChatTarget(TARGET, workspace, hops))
