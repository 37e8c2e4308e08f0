"""The inbox shows a result as people read it (agent, state, its own text, file links, time); the text the
chat received, with the spec's `[A2A result ...]` header, is only in a closed block shown on request."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from django.test import Client

from a2aconsole.core.events import Event
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.broadcast import _store
from a2aconsole.web.models import ChatTarget, InboxItem
from tests.support.console import owner_client

pytestmark = pytest.mark.django_db

AT = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
REPORT = "inbox/a2a/bot/report.pdf"
SPEC_TEXT = '[A2A result from "bot", task t1 (completed)]\nhere is the report\nFiles: ' + REPORT + "\nContext: c1"


@pytest.fixture
def owner(ws: Workspace) -> Client:
    ChatTarget.objects.create(id="console", name="Console", workspace=str(ws.root))
    return owner_client()


def items(html: str) -> list[str]:
    return re.findall(
        r'<li class="from-agent inbox-item[^>]*>(.*?)</li>\s*(?=<li class="from-agent inbox-item|</ol>)', html, re.S
    )


def test_result_read_as_people_read_it(owner: Client) -> None:
    _store(Event(kind="result", workspace="/w", agent="bot", task_id="t1", at=AT, context_id="c1", target="console",
                 state="completed", text="here is the report", data={"files": [REPORT], "watchId": "w1"}))  # fmt: skip
    InboxItem.objects.create(
        target_id="console",
        watch_id="w1",
        agent="bot",
        task_id="t1",
        context_id="c1",
        state="completed",
        text=SPEC_TEXT,
    )
    [item] = items(owner.get("/inbox/console/").content.decode())
    shown, raw = item.split('<details class="inbox-raw">')
    assert 'badge state-completed">completed' in shown and "bot" in shown and "<time " in shown
    assert '<div class="md"><p>here is the report</p>' in shown and "[A2A" not in shown
    assert f'href="/files/console/{REPORT}"' in shown  # a download link, not a file name in a text
    assert 'href="/tasks/bot/t1/?target=console"' in shown and 'href="/chat/console/?context=c1"' in shown
    assert "<summary" in raw and "open" not in raw.split(">", 1)[0]  # shown on request only
    assert "[A2A result from &quot;bot&quot;, task t1 (completed)]" in raw


def test_item_without_its_event_still_reads_without_the_header(owner: Client) -> None:
    InboxItem.objects.create(target_id="console", agent="bot", task_id="t2", state="failed",
                             text='[A2A result from "bot", task t2 (failed)]\nboom: cannot do that')  # fmt: skip
    [item] = items(owner.get("/inbox/console/").content.decode())
    shown = item.split('<details class="inbox-raw">')[0]
    assert '<div class="md"><p>boom: cannot do that</p>' in shown and 'badge state-failed">failed' in shown
