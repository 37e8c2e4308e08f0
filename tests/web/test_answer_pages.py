"""What an agent sends cannot sink the console's pages: a long text is saved as a file and pages, events and
inbox rows hold a preview with a link to it; only http(s) URLs become links. Real loopback agents, the real
runtime and event history, pages through the Django test client."""

from __future__ import annotations

from dataclasses import replace

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient

from a2aconsole.core import pending
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.results import PREVIEW_CHARS
from a2aconsole.web.broadcast import ChannelsBroadcast
from a2aconsole.web.chats import aresolve
from a2aconsole.web.models import ChatTarget, InboxItem, TaskEvent
from tests.support.agent_process import agent_process
from tests.support.agents import long_text
from tests.support.memory import reset_peak, status_kb
from tests.support.runtime import fresh_runtime
from tests.support.sends import send
from tests.support.watching import WaitableSink

pytestmark = pytest.mark.django_db(transaction=True)

SETTINGS = ClientSettings(wait_seconds=10, card_timeout_seconds=3, call_timeout=10)
LONG = 3_000_000  # characters: well over what is inlined, well under the byte budget
MB = 1024 * 1024
TEXT_FILE = "inbox/a2a/bot/long.txt"


@pytest.fixture
def client_settings() -> ClientSettings:
    return SETTINGS


async def _pages(owner: AsyncClient, task_id: str) -> dict[str, str]:
    urls = {
        "dashboard": "/",
        "chat": "/chat/console/",
        "task": f"/tasks/bot/{task_id}/?target=console",
        "inbox": "/inbox/console/",
    }
    out = {}
    for name, url in urls.items():
        r = await owner.get(url)
        assert r.status_code == 200, name
        out[name] = r.content.decode()
    return out


async def test_a_long_answer_is_a_file_and_pages_show_a_preview(watching, owner: AsyncClient, ws: Workspace) -> None:
    rt, events, _ = watching
    sent = await send(owner, {"agent": "bot", "message": f"bigtext {LONG}"})
    assert sent.status_code == 200
    assert (ws.root / TEXT_FILE).read_text() == long_text(LONG).strip()  # the whole text, saved
    [row] = await sync_to_async(list)(TaskEvent.objects.filter(kind="result"))
    assert len(row.text) < PREVIEW_CHARS + 200 and row.data["textFiles"][0]["file"] == TEXT_FILE
    pages = {"reply": sent.content.decode(), **await _pages(owner, row.task_id)}
    recheck = await owner.post(f"/tasks/bot/{row.task_id}/act/", {"action": "status", "target": "console"})
    pages["re-check"] = recheck.content.decode()  # the raw task JSON as the agent sends it, too
    for name, html in pages.items():
        assert len(html.encode()) < MB, f"{name}: {len(html.encode())} bytes"
        if name != "inbox":
            assert "line 1 of a long text" in html, name
            assert f'href="/files/console/{TEXT_FILE}"' in html, name
    assert "more characters)" in pages["re-check"]  # the raw JSON is a preview too


@pytest.mark.timeout(180)
async def test_a_100_mb_answer_costs_little_memory_and_no_page_grows(ws: Workspace, owner: AsyncClient) -> None:
    """The issue's target, through the console: the agent (in its own process, so its memory is its own)
    answers 100 MB, chunked; the console's RSS grows by less than 50 MB and every page stays under 1 MB."""
    await ChatTarget.objects.acreate(id="console", name="Console", workspace=str(ws.root))
    with agent_process(chunked=True) as url:
        ws.save_agents([{"name": "big", "url": url}], None)
        async with fresh_runtime(client_settings=replace(SETTINGS, wait_seconds=60)):  # the agent takes its time
            warm = await send(owner, {"agent": "big", "message": "hello"})
            assert "echo: hello" in warm.content.decode()
            reset_peak()
            before = status_kb("VmRSS")
            sent = await send(owner, {"agent": "big", "message": "bigtext 100000000"})
            grown_mb = (status_kb("VmHWM") - before) / 1024
            reply = sent.content.decode()
            pages = {"reply": reply}
            for name, page_url in (("dashboard", "/"), ("chat", "/chat/console/"), ("inbox", "/inbox/console/")):
                pages[name] = (await owner.get(page_url)).content.decode()
    assert grown_mb < 50, f"RSS grew by {grown_mb:.1f} MB"
    assert "agent &quot;big&quot; answered more than 14 MB to " in reply
    for name, html in pages.items():
        assert len(html.encode()) < MB, f"{name}: {len(html.encode())} bytes"
    assert not ws.inbox_dir.exists() and pending.read(ws).records == []


async def test_a_long_answer_delivered_by_a_watch_is_a_preview_in_the_inbox(
    ws: Workspace, owner: AsyncClient, make_agent
) -> None:
    await ChatTarget.objects.acreate(id="console", name="Console", workspace=str(ws.root))
    agent = make_agent(push=False)
    ws.save_agents([{"name": "bot", "url": agent.url}], None)
    events = WaitableSink(ChannelsBroadcast())
    async with fresh_runtime(client_settings=replace(SETTINGS, wait_seconds=0.2), events=events) as rt:
        await rt.start_registry([ws])
        out = await rt.tool.run("send", {"agent": "bot", "message": f"bigtext {LONG} later"}, await aresolve("console"))
        assert out.get("state") == "working", out
        agent.release("later")
        await events.until_kind("delivered")
    [item] = await sync_to_async(list)(InboxItem.objects.all())
    assert item.text.startswith('[A2A result from "bot"') and len(item.text) < 3 * PREVIEW_CHARS
    assert TEXT_FILE in item.text  # the preview names the file with the whole text
    rows = await sync_to_async(list)(TaskEvent.objects.all())
    assert all(len(r.text) < 3 * PREVIEW_CHARS for r in rows), [(r.kind, len(r.text)) for r in rows]
    for name, html in (await _pages(owner, out["taskId"])).items():
        assert len(html.encode()) < MB, f"{name}: {len(html.encode())} bytes"
        assert "line 1 of a long text" in html, name


@pytest.mark.parametrize("url", ["javascript:alert(document.cookie)", "data:text/html,<script>alert(1)</script>"])
async def test_a_link_that_is_not_http_is_shown_as_text(watching, owner: AsyncClient, url: str) -> None:
    sent = await send(owner, {"agent": "bot", "message": f"link {url}"})
    assert sent.status_code == 200 and "a link for you" in sent.content.decode()
    [row] = await sync_to_async(list)(TaskEvent.objects.filter(kind="result"))
    assert row.data["links"] == [] and row.data["otherUrls"] == [url]
    pages = {"reply": sent.content.decode(), **await _pages(owner, row.task_id)}
    shown = url.replace("<", "&lt;").replace(">", "&gt;")
    for name, html in pages.items():
        if name == "inbox":
            continue
        assert f"Not a web link (shown as text): <code>{shown}</code>" in html, name
        assert f'href="{shown}' not in html and 'href="javascript:' not in html, name
        assert "<script>alert(1)" not in html, name


async def test_an_http_link_is_a_link(watching, owner: AsyncClient) -> None:
    sent = await send(owner, {"agent": "bot", "message": "link https://files.example/r.pdf"})
    assert 'href="https://files.example/r.pdf" rel="noopener noreferrer"' in sent.content.decode()


async def test_the_console_reads_answers_within_max_response_bytes(
    ws: Workspace, owner: AsyncClient, make_agent
) -> None:
    """`A2AClient__MaxResponseBytes` (here 64 KB) is the console's budget, not only the tool's default."""
    await ChatTarget.objects.acreate(id="console", name="Console", workspace=str(ws.root))
    agent = make_agent(streaming=False, push=False)
    ws.save_agents([{"name": "bot", "url": agent.url}], None)
    async with fresh_runtime(client_settings=replace(SETTINGS, max_response_bytes=64 * 1024)):
        small = await send(owner, {"agent": "bot", "message": "bigtext 30000"})
        big = await send(owner, {"agent": "bot", "message": "bigtext 100000"})
    assert "line 1 of a long text" in small.content.decode()
    assert "agent &quot;bot&quot; answered more than 0.06 MB to " in big.content.decode()
