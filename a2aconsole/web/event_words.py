"""The timeline's words for what the console did about a task (a watch began, changed, ended; a result was
delivered): the owner's language, not the event names the core records (`watch.armed`, `watch.ended`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone

from a2aconsole.core.ends import end_word
from a2aconsole.core.watches import AWAY, parse_at

FOLLOWING = {"push": "by push", "subscribe": "by its stream", "poll": "by polling"}
# how a watch ended (`core.ends.end_word`), with why where the word alone does not say it
ENDED = {
    "settled": "Stopped following: the task is over",
    "question": "Waiting for your answer",
    "timeout": "Stopped following: timed out (past the watch's time limit)",
    "agent removed": "Stopped following: stopped (the agent was removed)",
    "too big": "Stopped following: stopped (the agent's answer is too big to read)",
    "canceled": "Stopped following: canceled",
    "lost": "Stopped following: lost (the agent no longer knows the task)",
}


# who stopped a watch (its `watch.ended` event's `by`: core.watch_control.STOPPED_BY)
STOPPED_BY = {"owner": "by you", "api": "by the agent host", "shell": "from the shell"}


def stopped_words(by: str, at: datetime | None) -> str:
    """The words of a watch the owner (or a host) ended, the task going on: "Stopped watching (by you, 21:04)"."""
    when = f"{timezone.localtime(at):%H:%M}" if at is not None else ""
    said = [w for w in (STOPPED_BY.get(by, ""), when) if w]
    return "Stopped watching" + (f" ({', '.join(said)})" if said else "")


def describe(
    kind: str, data: dict[str, Any] | None, target: str = "", state: str = "", at: datetime | None = None
) -> str:
    """One line for an event of the console's own (any kind but the agent's: sent, state, result, …); `state`:
    the event's (a settled watch's end names it); `at`: when it happened (a stop says it)."""
    data = data or {}
    how = FOLLOWING.get(str(data.get("source") or ""), "")
    note = str(data.get("note") or "")
    if kind == "watch.armed":
        return f"Following {how}" if how else "Following the task"
    if kind == "watch.update" and data.get("news") == "quiet":
        since = parse_at(data.get("heardAt"))
        when = f" since {timezone.localtime(since):%H:%M}" if since is not None else ""
        return f"No news{when} ({data.get('error') or 'the agent does not answer'})"
    if kind == "watch.update" and data.get("news") == "heard":
        return "The agent answers again"
    if kind == "watch.update":
        line = f"Now following {how}" if how else "The watch changed"
        return f"{line}: {note}" if note else line
    if kind == "watch.ended":
        reason = str(data.get("reason") or "")
        if reason == "stopped":
            return stopped_words(str(data.get("by") or ""), at)
        away = "; it finished while you were away" if data.get(AWAY) else ""
        if reason == "settled" and state:
            return f"{ENDED['settled']} ({end_word(reason, state)}{away})"
        if away:
            return f"{ENDED.get(reason, 'Stopped following')}{away}"
        return ENDED.get(reason, f"Stopped following: {end_word(reason)}" if reason else "Stopped following")
    if kind == "delivered":
        return f"Result delivered to the chat {target}" if target else "Result delivered"
    if kind == "undelivered":
        attempt = data.get("attempt")
        tried = f" (attempt {attempt})" if attempt else ""
        return f"Result not delivered yet{tried}: kept, and tried again"
    return kind.replace(".", " ").replace("_", " ").capitalize()
