"""What a cancel did, in the words every caller gets (the tool, the console's Cancel button, the JSON API).

The watch of a task is kept until the agent says how the cancel went (DESIGN "Honest states"): CancelTask
answers the task canceled (the watch ends "canceled"), or still running (the cancel is only requested: the
watch goes on, marked `cancelRequested` in pending.json so a restarted console still says so, and delivers
whatever the task settles as, once), or the agent refuses (the task's outcome; the watch goes on while the
task runs), or the agent cannot be reached (nothing changes). While the CancelTask call is in flight the
registry holds back the watch's own finish (`WatchControl.holding`), so a canceled outcome is never both
answered here and delivered to the chat.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from a2aconsole.core import pending
from a2aconsole.core.errors import FileFormatError, ToolError
from a2aconsole.core.files import AgentsFile, Workspace
from a2aconsole.core.pending import PendingTx
from a2aconsole.core.remote import Connection, RemoteError, TaskSnapshot
from a2aconsole.core.results import is_terminal
from a2aconsole.core.tool.args import agent_entry, task_id_of
from a2aconsole.core.tool.parts import ToolParts
from a2aconsole.core.watches import end_push, same_watch

CANCEL_REQUESTED = "cancelRequested"  # a watch record's mark: when a cancel was asked for and not yet confirmed
# what an agent's refusal of CancelTask comes as; any other failure means it was not reached (or not understood)
REFUSALS = frozenset({"not_cancelable", "terminal", "unsupported", "rpc"})
GOES_ON = "goes on"  # an answer's `watch` while the watch goes on (else the word it ended with)


def refused(e: RemoteError) -> bool:
    """True when the agent answered the cancel with a refusal (the task's outcome tells the rest)."""
    return e.kind in REFUSALS


def unreachable_error(e: RemoteError, watched: bool) -> str:
    """The answer when the cancel never reached the agent: nothing was removed."""
    then = "the watch goes on" if watched else "nothing was canceled"
    return f"{e}. Could not reach the agent; {then}"


def canceled_note(stopped: bool) -> str:
    return "canceled; the watch of this task ended" if stopped else "canceled"


def finished_note(state: str) -> str:
    return f"the task had already finished ({state}); it was not canceled"


def requested_note(state: str, watched: bool) -> str:
    then = (
        "the watch goes on and delivers its outcome" if watched else "no watch follows it: check it with action=status"
    )
    return f"cancel requested; the task is still {state}; {then}"


def refused_note(e: RemoteError, state: str, watched: bool) -> str:
    then = "the watch goes on" if watched else "no watch follows it"
    return f"the agent refused to cancel ({e}); the task is still {state}; {then}"


def watched(workspace: Workspace, target: str, agent: str, task_id: str) -> bool:
    """Whether this chat watches the task now (a kept result is not a watch: it is being delivered)."""
    pf = pending.read(workspace)
    if pf.parse_error:
        return False
    return any(r.undelivered is None and same_watch(r, target, agent, task_id) for r in pf.records)


async def mark_requested(workspace: Workspace, target: str, agent: str, task_id: str, at: datetime) -> bool:
    """Record first: the chat's watch of the task says a cancel was requested (kept across restarts; shown in the
    watch table). False when no watch of it is left."""

    def mark(tx: PendingTx) -> bool:
        ids = [r.watch_id for r in tx.records if r.undelivered is None and same_watch(r, target, agent, task_id)]
        for rid in ids:
            rec = tx.edit(rid)
            if rec is not None:
                rec.extra = {**rec.extra, CANCEL_REQUESTED: at.isoformat()}  # a new dict: the store compares by JSON
        return bool(ids)

    async with pending.transaction(workspace) as tx:
        return mark(tx)


async def run(
    tool: ToolParts, workspace: Workspace, args: dict[str, Any], target: str, agent_file: AgentsFile
) -> dict[str, Any]:
    """The tool's `cancel`: CancelTask, the chat's watch of the task kept until the agent's answer says what
    happened."""
    entry = agent_entry(workspace, args, agent_file)
    task_id = task_id_of(args, "cancel")
    is_watched = watched(workspace, target, entry.name, task_id)
    refusal: RemoteError | None = None
    async with tool.watches.holding(workspace, target, entry.name, task_id):
        try:
            conn = await tool.pool.get(workspace, entry)
            try:
                task = await conn.cancel(task_id)
            except RemoteError as e:
                if not refused(e):
                    raise
                refusal = e
                task = await conn.get_task(task_id)
        except RemoteError as e:
            if e.kind == "not_found":
                raise
            tool.pool.forget_if_broken(workspace, entry.name, e)
            raise ToolError(unreachable_error(e, is_watched)) from None
        if is_terminal(task.state):
            out = await _end_watch(tool, conn, task, workspace, target, entry.name)
            if task.state == "canceled" and refusal is None:
                out["note"] = canceled_note(out.get("watch") == "canceled")
            else:
                out["note"] = finished_note(task.state)
        else:
            if refusal is None and is_watched:
                is_watched = await mark_requested(workspace, target, entry.name, task_id, tool.clock.now())
            out = await tool.finish(task, entry.name, workspace, target)
            if refusal is None:
                out["note"] = requested_note(task.state, is_watched)
            else:
                out["note"] = refused_note(refusal, task.state, is_watched)
            if is_watched:
                out["watch"] = GOES_ON
    return out


async def _end_watch(
    tool: ToolParts, conn: Connection, task: TaskSnapshot, workspace: Workspace, target: str, agent: str
) -> dict[str, Any]:
    """The cancel found the task over: the chat's watch of it ends (its outcome is this answer, not a delivery),
    with the task's own word (`canceled`, `completed`, ...)."""
    reason = "canceled" if task.state == "canceled" else "settled"
    warning = None
    try:
        stopped = await tool.watches.stop_watching(workspace, target, agent, task.id, reason)
    except FileFormatError as e:
        stopped, warning = None, f"{e}; a watch of this task may still deliver a result"
    await end_push(conn, stopped)
    out = await tool.finish(task, agent, workspace, target)
    if stopped is not None:
        out["watch"] = task.state
    if warning:
        out["warning"] = warning
    return out
