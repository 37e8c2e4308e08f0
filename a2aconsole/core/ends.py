"""The words for how a watch ended, the same everywhere the owner reads them: the timeline, the tool's and the
API's answers (`watch`), the watch table and the chat notices (docs/watches.md has the table)."""

from __future__ import annotations

# a `watch.ended` event's reason -> its word (a settled task, or a question, ends with the task's own state)
REASON_WORDS = {
    "stopped": "stopped",
    "timeout": "timed out",
    "canceled": "canceled",
    "lost": "lost",
    "agent removed": "stopped",
    "too big": "stopped",
}


def end_word(reason: str, state: str = "") -> str:
    """How a watch ended, in one word: completed, failed, canceled, rejected (the task's state), input-required or
    auth-required (a question), lost, stopped, timed out."""
    if reason in ("settled", "question"):
        return state or ("settled" if reason == "settled" else "input-required")
    return REASON_WORDS.get(reason, reason)
