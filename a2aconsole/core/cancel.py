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

from .client import RemoteError
from .pending_tx import PendingTx
from .watch_control import same_watch
from .workspace import Workspace

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
    pf = workspace.read_pending()
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

    async with workspace.pending_tx() as tx:
        return mark(tx)
