"""Fragments several live pages send: a task's answer panel, a running task's progress line, an element taken away.

A change to one task re-renders its answer panel on every page that may show it (the chat, the watch table, the
task page): rendered once and reused by the other tabs that need the very same fragment.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from django.template.loader import render_to_string
from django.utils.html import format_html

from a2aconsole.web import history, task_index
from a2aconsole.web.models import TaskEvent

OUTCOME_KINDS = ("result", "question", "state", "sent")  # "sent": a message or an answer went to the task
REPLY = "#reply"  # the chat's answer panel: an answer given in it replaces it whole
WATCH_ANSWER, TASK_ANSWER = "#watch-answer", "#task-answer"  # the other pages' answer panels, the same way


def outcome_of(ev: TaskEvent) -> dict[str, Any]:
    """A task's answer panel (`_outcome.html`'s `r`) from its latest outcome event."""
    data = ev.data if isinstance(ev.data, dict) else {}
    r: dict[str, Any] = {
        **data,
        "agent": ev.agent,
        "taskId": ev.task_id,
        "contextId": ev.context_id,
        "state": ev.state or "unknown",
        "dom_id": history.dom_id(ev.agent, ev.task_id),
    }
    if ev.kind == "sent":  # the owner's answer (or message) reached the task; the agent has not said more yet
        r["state"] = "submitted"
    elif ev.kind == "question":
        r["question"] = ev.text
    elif ev.kind == "result":
        r["text"] = ev.text
    elif ev.text:
        r["note"] = ev.text  # progress: "working 3/8"
    return r


class Rendered:
    """Fragments rendered for one tab, reused by the others that need the very same one (ten tabs after a push
    render a row or an answer panel once). Keyed by everything the fragment shows; bounded, oldest out."""

    def __init__(self, size: int = 2000) -> None:
        self._lock = threading.Lock()
        self._kept: OrderedDict[Hashable, str] = OrderedDict()
        self._size = size

    def get(self, key: Hashable, make: Callable[[], str]) -> str:
        with self._lock:
            found = self._kept.get(key)
        if found is None:
            found = make()
            with self._lock:
                self._kept[key] = found
                if len(self._kept) > self._size:
                    self._kept.popitem(last=False)
        return found


RENDERED = Rendered()


def outcomes(tasks: set[tuple[str, str]], target: str = "", answer_target: str = REPLY) -> list[str]:
    """The answer panel of each changed task, badge and text from one render (dropped by tabs not showing it);
    a running task's says what the agent said last ("Working on it: working 3/8"). `answer_target`: the page's
    answer panel, which the reply to an answer given in it replaces whole: the chat's `#reply`, the watch
    table's `#watch-answer`, a task page's `#task-answer` (put in place of the form, a reply nested a second
    panel of the task, with its ids, in the first)."""
    out = []
    lines = task_index.progress_of(tasks)
    for key, ev in history.latest_events(tasks, kinds=OUTCOME_KINDS).items():
        if ev.kind == "state" and ev.state in history.TERMINAL:
            continue  # the result with its text follows (a finished panel is never replaced again)
        r = outcome_of(ev)
        p = task_index.progress_view(lines.get(key), r["state"])
        if p is not None:
            r["note"] = p["text"]
        ctx = {"r": r, "target": {"id": ev.target or target}, "answer_target": answer_target, "outcome_oob": 1}
        found = ("outcome", ev.id, ctx["target"]["id"], r.get("note"), answer_target)
        out.append(RENDERED.get(found, lambda c=ctx: render_to_string("web/_outcome.html", c)))
    return out


def progress_lines(tasks: set[tuple[str, str]]) -> list[str]:
    """The conversation's progress line of each changed task (dropped by tabs not showing it)."""
    lines = task_index.progress_of(tasks)
    return [
        render_to_string(
            "web/_progress.html",
            {
                "p": task_index.progress_view(lines.get(key)),
                "progress_id": f"progress-{history.dom_id(*key)}",
                "oob": 1,
            },
        )
        for key in sorted(tasks)
    ]


def delete(element_id: str) -> str:
    """An out-of-band fragment that takes the element away."""
    return format_html('<i id="{}" hx-swap-oob="delete"></i>', element_id)
