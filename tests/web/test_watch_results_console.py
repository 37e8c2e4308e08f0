"""A result a watch delivered looks in the console exactly like one the tool returned: the dashboard, the chat
and the task page show its final text, state and file links (not the chat's `[A2A result …]` header text),
while the chat target still gets the spec's text. Real loopback agents, the real runtime and event history."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.template.loader import render_to_string
from django.test import AsyncClient

from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.chats import aresolve
from a2aconsole.web.models import InboxItem, TaskEvent
from tests.support.sends import send
from tests.support.watching import add_record, settled_at_agent, start_task

pytestmark = pytest.mark.django_db(transaction=True)

# a hold task outlives this, so a watch takes over; real time, as the console runs
SETTINGS = ClientSettings(wait_seconds=0.2, card_timeout_seconds=3, call_timeout=10)
REPORT = "inbox/a2a/bot/report.pdf"


@pytest.fixture
def client_settings() -> ClientSettings:
    return SETTINGS


async def _pages(owner: AsyncClient, task_id: str) -> dict[str, str]:
    pages = {"dashboard": "/", "chat": "/chat/console/", "task": f"/tasks/bot/{task_id}/?target=console"}
    out = {}
    for name, url in pages.items():
        r = await owner.get(url)
        assert r.status_code == 200, name
        out[name] = r.text
    return out


async def test_watch_delivered_result_shows_its_final_text(watching, owner: AsyncClient) -> None:
    rt, events, agent = watching
    out = await rt.tool.run("send", {"agent": "bot", "message": "hold late"}, await aresolve("console"))
    assert out.get("state") == "working" and out.get("taskId"), out
    agent.release("late")
    await events.until_kind("delivered")

    [item] = await sync_to_async(list)(InboxItem.objects.all())
    assert item.text.startswith('[A2A result from "bot"') and "released late" in item.text  # the spec's text
    [row] = await sync_to_async(list)(TaskEvent.objects.filter(kind="result"))
    assert row.text == "released late" and row.state == "completed" and row.data["watchId"]
    for name, html in (await _pages(owner, out["taskId"])).items():
        assert "released late" in html and 'badge state-completed">completed' in html, name
        assert "<p>[A2A" not in html, name  # the header text is the chat's, not the console's


async def test_watch_delivered_files_get_download_links(watching, owner: AsyncClient, ws: Workspace) -> None:
    rt, events, _ = watching
    task = await start_task(rt.remote, ws, "bot", "file")
    conn = await rt.remote.connect(ws.read_agents().get("bot"))
    await settled_at_agent(conn, task.id, "completed")
    record = await add_record(ws, task, "bot", rt.clock, target="console", source="poll")
    assert rt.registry is not None
    await rt.registry.arm(ws, record)
    rt.registry.wake(record.watch_id)  # check now, not after the first poll nap
    await events.until_kind("delivered")

    for name, html in (await _pages(owner, task.id)).items():
        assert '<div class="md"><p>here is the report</p>' in html, name
        assert f'href="/files/console/{REPORT}"' in html, name
        assert "https://files.example/r.pdf" in html, name
    got = await owner.get(f"/files/console/{REPORT}")
    assert got.status_code == 200 and b"".join(got.streaming_content).startswith(b"%PDF")


async def test_watch_delivered_question_is_answerable(watching, owner: AsyncClient, ws: Workspace) -> None:
    rt, events, _ = watching
    task = await start_task(rt.remote, ws, "bot", "ask")
    conn = await rt.remote.connect(ws.read_agents().get("bot"))
    await settled_at_agent(conn, task.id, "input-required")
    record = await add_record(ws, task, "bot", rt.clock, target="console", source="poll")
    assert rt.registry is not None
    await rt.registry.arm(ws, record)
    rt.registry.wake(record.watch_id)
    await events.until_kind("delivered")

    for name, html in (await _pages(owner, task.id)).items():
        assert "Which colour?</" in html and "<p>[A2A" not in html, name
        assert f'name="task_id" value="{task.id}"' in html, name  # the answer form
    r = await send(owner, {"agent": "bot", "message": "blue", "task_id": task.id})
    assert "got answer: blue" in r.text


def test_event_files_link_into_the_event_chat() -> None:
    """The dashboard renders every chat's results with the console's `target`: a file link names the event's chat."""
    ev = TaskEvent(
        agent="bot",
        task_id="t1",
        target="other",
        kind="result",
        state="completed",
        text="done",
        data={"files": [REPORT], "links": [], "skipped": [{"name": "big.bin", "bytes": 2048}]},
    )
    html = render_to_string("web/_event.html", {"ev": ev, "target": {"id": "console"}, "open_ids": set()})
    assert f'href="/files/other/{REPORT}"' in html and "Skipped (too big): big.bin" in html
