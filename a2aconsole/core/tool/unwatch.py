"""Stop watching a task: the tool's `unwatch`, for the owner (the console's Stop watching), an agent host (the
JSON API) and the shell.

The task goes on at the agent; this chat's watch of it ends "stopped" through the watch control's one way to end
a watch (`stop_watching`: out of `pending.json` and the registry, a `watch.ended` event saying who stopped it),
so nothing more of it is delivered. A push watch's config is then removed at the agent, best effort and bounded.
A result already kept for delivery (the task finished before the stop) is the outcome and still goes out.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from a2aconsole.core.errors import ToolError
from a2aconsole.core.files import AgentEntry, AgentsFile, Workspace
from a2aconsole.core.pending import WatchRecord
from a2aconsole.core.tool.args import agent_entry, task_id_of
from a2aconsole.core.tool.parts import ToolParts
from a2aconsole.core.watches import PUSH_REMOVAL_TIMEOUT, remove_push_config

log = logging.getLogger(__name__)

STOPPED = "stopped"  # the answer's `watch`, the end's reason and word (core/ends.py)
STOPPED_NOTE = (
    "stopped watching; the task goes on at the agent and its result will not be delivered here; "
    "check it with action=status"
)


def not_watched(agent: str, task_id: str) -> str:
    return (
        f'this chat does not watch task {task_id} of "{agent}" (it has finished, or was stopped already); '
        "nothing was changed"
    )


async def run(
    tool: ToolParts, workspace: Workspace, args: dict[str, Any], target: str, agents: AgentsFile, by: str
) -> dict[str, Any]:
    """End this chat's watch of the task, "stopped" by `by`; ToolError when it watches no such task."""
    entry = agent_entry(workspace, args, agents)
    task_id = task_id_of(args, "unwatch")
    stopped = await tool.watches.stop_watching(workspace, target, entry.name, task_id, STOPPED, by=by)
    if stopped is None:
        raise ToolError(not_watched(entry.name, task_id))
    if stopped.source == "push":
        await _forget_push(tool, workspace, entry, stopped)
    return {
        "agent": entry.name,
        "taskId": task_id,
        "contextId": stopped.context_id,
        "watch": STOPPED,
        "note": STOPPED_NOTE,
    }


async def _forget_push(tool: ToolParts, workspace: Workspace, entry: AgentEntry, stopped: WatchRecord) -> None:
    """The agent must stop pushing to the ended watch: its config removed, within PUSH_REMOVAL_TIMEOUT in all (an
    unreachable agent does not hold the answer up, and drops the config with the task anyway)."""
    try:
        conn = await asyncio.wait_for(tool.pool.get(workspace, entry), PUSH_REMOVAL_TIMEOUT)
    except Exception as e:
        log.warning("push config of watch %s not removed: %s", stopped.watch_id, getattr(e, "kind", type(e).__name__))
        return
    await remove_push_config(conn, stopped)
