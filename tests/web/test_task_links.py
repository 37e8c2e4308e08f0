"""A task id is the agent's to choose: its link (rendered by a page or by `links.task_url`) stays on that task's
page whatever the id holds, as a browser resolves it, and the page opens with the same id."""

from __future__ import annotations

import html as html_lib
import re
from datetime import UTC, datetime
from urllib.parse import unquote, urlsplit

import pytest
from django.test import Client
from django.urls import resolve, reverse

from a2aconsole.core.events import Event
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.broadcast import _store
from a2aconsole.web.links import task_url
from a2aconsole.web.models import ChatTarget
from a2aconsole.web.views import tasks
from tests.support.console import create_owner

pytestmark = pytest.mark.django_db

HOSTILE = [
    "../../../../agents/file",
    "a/../../../../../logout",
    "..",
    ".",
    "...",
    "%2e%2e",
    ".%2E",
    "x/act",
    "~",
    "~..",
    "~s",
    "/",
    "a b?c=1#d&e",
    "5c1e-uuid-like",
]


def _dot(segment: str) -> bool:
    """A segment a browser (the WHATWG URL parser) treats as `.` or `..`, its dots quoted or not."""
    return segment.lower().replace("%2e", ".") in (".", "..")


def _browser_path(href: str) -> str:
    """The path a browser goes to for `href` on a console page (dot segments resolved as the URL standard does)."""
    out: list[str] = []
    segments = urlsplit(href).path.split("/")[1:]
    for i, seg in enumerate(segments):
        last = i == len(segments) - 1
        if _dot(seg):
            if seg.lower().replace("%2e", ".") == ".." and out:
                out.pop()
            if last:
                out.append("")
        else:
            out.append(seg)
    return "/" + "/".join(out)


@pytest.mark.parametrize("task_id", HOSTILE)
def test_a_task_link_opens_that_tasks_page_whatever_its_id(task_id: str) -> None:
    for href in (task_url("bot", task_id, "console"), reverse("task", args=["bot", task_id])):
        path = _browser_path(href)
        assert path.startswith("/tasks/bot/") and path.count("/") == 4, href  # one segment for the id
        assert not any(_dot(seg) for seg in path.split("/")), href
        match = resolve(unquote(path))  # the server sees the path unquoted
        assert match.func is tasks.page and match.kwargs == {"agent": "bot", "task_id": task_id}, href
    act = reverse("task-act", args=["bot", task_id])
    assert resolve(unquote(_browser_path(act))).func is tasks.act and _browser_path(act).endswith("/act/")


def test_a_segment_that_no_link_makes_is_not_found() -> None:
    c = Client()
    c.force_login(create_owner())
    assert c.get("/tasks/bot/~x/").status_code == 404


def test_pages_link_to_hostile_task_ids_as_their_own_pages(ws: Workspace) -> None:
    ChatTarget.objects.create(id="console", name="Console", workspace=str(ws.root))
    at = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
    for task_id in HOSTILE:
        _store(Event(kind="result", workspace=str(ws.root), agent="bot", task_id=task_id, at=at, target="console",
                     state="completed", text="done"))  # fmt: skip
    c = Client()
    c.force_login(create_owner())
    for page in ("/tasks/", "/chat/console/"):
        html = c.get(page).content.decode()
        hrefs = {h.split("?")[0] for h in _hrefs(html) if h.startswith("/tasks/bot/")}
        assert len(hrefs) == len(HOSTILE), page
        for href in hrefs:
            assert _browser_path(href).count("/") == 4, (page, href)
    for task_id in HOSTILE:
        r = c.get(task_url("bot", task_id, "console"))
        assert r.status_code == 200 and r.context["task_id"] == task_id


def _hrefs(html: str) -> list[str]:
    return [html_lib.unescape(h) for h in re.findall(r'href="([^"]+)"', html)]
