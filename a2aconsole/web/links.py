"""The links a table row makes to its agent, task and chat: formatted from each page's URL prefix, not reversed
per row (a watch table page of 50 rows reversed 200 URLs, a quarter of its render; see tests/bench/tasks_page.py).
Each part is quoted whole, `/` too, so an id an agent chose stays one segment of the link.

A task id is the agent's to choose, so its link must never lead to another console page. A browser resolves
`.` and `..` segments in a link however their dots are quoted, and the request's path reaches Django unquoted
(`%2F` is `/` there), so quoting alone cannot keep an id one segment: `TaskIdConverter` writes it with `~` as
an escape (`~~` for `~`, `~s` for `/`, and `~` before an id that is only dots), which makes `reverse` and
`task_url` safe alike.
"""

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


class TaskIdConverter:
    """A task id as one URL segment: `~` escapes `~` and `/`, and an id of dots (`.`, `..`) gets one before it."""

    regex = "[^/]+"
    _ESCAPED = {"~": "~", "s": "/", ".": "."}

    def to_python(self, value: str) -> str:
        out, chars = [], iter(value)
        for c in chars:
            if c == "~":
                c = self._ESCAPED.get(next(chars, ""), "")
                if not c:
                    raise ValueError("not a task id's segment")  # the URL then matches no page: 404
            out.append(c)
        return "".join(out)

    def to_url(self, value: str) -> str:
        segment = value.replace("~", "~~").replace("/", "~s")
        return f"~{segment}" if segment and not segment.strip(".") else segment


_TASK_ID = TaskIdConverter()


def task_url(agent: str, task_id: str, target: str = "") -> str:
    where = f"?target={quote(target, safe='')}" if target else ""
    return f"{_prefixes()[1]}{quote(agent, safe='')}/{quote(_TASK_ID.to_url(task_id), safe='')}/{where}"


def chat_url(target: str, context_id: str = "") -> str:
    context = f"?context={quote(context_id, safe='')}" if context_id else ""
    return f"{_prefixes()[2]}{quote(target, safe='')}/{context}"


def watch_action_url() -> str:
    return _prefixes()[3]
