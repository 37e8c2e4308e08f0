"""The links a table row makes to its agent, task and chat: formatted from each page's URL prefix, not reversed
per row (a watch table page of 50 rows reversed 200 URLs, a quarter of its render; see tests/bench/tasks_page.py).
Each part is quoted whole (`/` too, but in a task id, which the task page's URL takes as a path)."""

from __future__ import annotations

from functools import cache
from urllib.parse import quote

from django.urls import reverse


@cache
def _prefixes() -> tuple[str, str, str, str]:
    return (
        reverse("agent", args=["-"])[:-2],
        reverse("tasks"),
        reverse("conversation", args=["-"])[:-2],
        reverse("watch-action"),
    )


def agent_url(agent: str) -> str:
    return f"{_prefixes()[0]}{quote(agent, safe='')}/"


def task_url(agent: str, task_id: str, target: str = "") -> str:
    where = f"?target={quote(target, safe='')}" if target else ""
    return f"{_prefixes()[1]}{quote(agent, safe='')}/{quote(task_id, safe='/')}/{where}"


def chat_url(target: str, context_id: str = "") -> str:
    context = f"?context={quote(context_id, safe='')}" if context_id else ""
    return f"{_prefixes()[2]}{quote(target, safe='')}/{context}"


def watch_action_url() -> str:
    return _prefixes()[3]
