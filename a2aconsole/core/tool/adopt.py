"""Watch a task the console did not start: one the agent lists (`Connection.list_tasks`) that another client with
the same key started, or whose send was lost. The console's own action (`WATCH`), not one of the model's.

The task is read by GetTask and answered as `status` answers (its outcome, its event in the history: the console
knows the task from then on). A settled task's outcome is all there is (its result fetched); a running one gets a
watch record made as a send's is (`A2ATool.watch_record`: push, stream or polling, as the agent offers), written
to `pending.json` first, then armed, so its result comes to the chat as a send's would.
"""

from __future__ import annotations

from typing import Any

from a2aconsole.core import pending
from a2aconsole.core.files import AgentsFile, Workspace
from a2aconsole.core.results import is_settled
from a2aconsole.core.tool.args import agent_entry, task_id_of
from a2aconsole.core.tool.parts import ToolParts

WATCH = "watch"
WATCHING_NOTE = (
    "this chat watches the task now: its result will arrive here by itself; action=unwatch stops watching "
    "(the task goes on at the agent)"
)


def already_note(agent: str, task_id: str) -> str:
    return f'this chat watches task {task_id} of "{agent}" already: its result will arrive here by itself'


async def run(
    tool: ToolParts, workspace: Workspace, args: dict[str, Any], target: str, agents: AgentsFile
) -> dict[str, Any]:
    """Watch the task for the chat: its outcome, with `watch` "armed" (a new watch), "already" (the chat watched
    it), or none (settled: nothing to watch)."""
    entry = agent_entry(workspace, args, agents)
    task_id = task_id_of(args, WATCH)
    conn = await tool.pool.get(workspace, entry)
    task = await conn.get_task(task_id)
    out = await tool.finish(task, entry.name, workspace, target)
    if is_settled(out["state"]):
        return out
    record = tool.watch_record(conn, task, target)
    async with pending.transaction(workspace) as tx:
        if tx.watching(target, entry.name, task_id):
            return {**out, "watch": "already", "note": already_note(entry.name, task_id)}
        tx.add(record)
    await tool.watches.arm(workspace, record)
    return {**out, "watch": "armed", "note": WATCHING_NOTE}
