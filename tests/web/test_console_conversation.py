"""Conversation, agent page, watch table, task page and downloads, through the Django async test client
against real loopback agents and the real tool."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

import pytest
from asgiref.sync import sync_to_async
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import AsyncClient

from a2aconsole.core import pending
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.tool.tool import A2ATool
from a2aconsole.web import broadcast, sends
from a2aconsole.web.models import ChatTarget
from tests.support.agents import TestAgent
from tests.support.console import CONSOLE_SETTINGS, add_agent, record_event
from tests.support.sends import send

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "k-conversation-secret"


async def test_send_shows_the_answer(owner: AsyncClient, tool: A2ATool, ws: Workspace, agent: TestAgent) -> None:
    add_agent(ws, agent, key=KEY)
    r = await send(owner, {"agent": "bot", "message": "hello page"})
    assert r.status_code == 200
    assert "echo: hello page" in r.text and "completed" in r.text
    assert KEY not in r.text
    # htmx gets the chat log at once, with the message on its way in it (the send goes on in the background)
    r = await owner.post(
        "/chat/console/send/",
        {"agent": "bot", "message": "hello htmx"},
        headers={"HX-Request": "true", "HX-Target": "chat-log"},
    )
    assert r.text.lstrip().startswith('<div id="chat-log"') and "hello htmx" in r.text and "sending…" in r.text
    await sends.settled()
    await broadcast.flush()
    # every step is in the chat's history, which the page shows
    page = await owner.get("/chat/console/")
    assert "You → bot" in page.text and "hello htmx" in page.text and "echo: hello htmx" in page.text
    # continue the same context
    context_id = agent.received[-1].context_id
    assert f"context={context_id}" in page.text
    r = await send(owner, {"agent": "bot", "message": "hello again", "context_id": context_id})
    assert "echo: hello again" in r.text and agent.received[-1].context_id == context_id


async def test_send_errors_in_owner_words(owner: AsyncClient, tool: A2ATool, ws: Workspace, agent: TestAgent) -> None:
    add_agent(ws, agent)
    r = await send(owner, {"agent": "nobody", "message": "hi"})
    assert r.status_code == 400 and "Not sent" in r.text
    ws.save_agents([{"name": "bot", "url": "http://127.0.0.1:9/"}], None)
    r = await send(owner, {"agent": "bot", "message": "hi"})
    # what was typed stays, marked not sent, with why and what can be done about it
    assert r.status_code == 200 and "not sent" in r.page and "bot" in r.page and ">Retry</button>" in r.page


async def test_attachments_stored_in_workspace_and_sent(
    owner: AsyncClient, tool: A2ATool, ws: Workspace, agent: TestAgent
) -> None:
    add_agent(ws, agent)
    upload = SimpleUploadedFile("../../notes.txt", b"some notes", content_type="text/plain")
    r = await send(owner, {"agent": "bot", "message": "hello file", "files": [upload]})
    assert "echo: hello file" in r.text
    saved = list((ws.root / "uploads").rglob("*"))
    files = [p for p in saved if p.is_file()]
    assert len(files) == 1 and files[0].name == "notes.txt" and files[0].read_bytes() == b"some notes"
    assert any("raw" in p or "url" in p for p in agent.received[-1].parts[1:])


async def test_files_only_send_from_the_console(
    owner: AsyncClient, tool: A2ATool, ws: Workspace, agent: TestAgent
) -> None:
    """The console's form follows the tool's rule: files without a message are sent; neither is refused."""
    add_agent(ws, agent)
    upload = SimpleUploadedFile("report.txt", b"the report", content_type="text/plain")
    r = await send(owner, {"agent": "bot", "message": "", "files": [upload]})
    assert r.status_code == 200
    sent = agent.received[-1].parts
    assert len(sent) == 1 and "raw" in sent[0]  # the file alone, no empty text part
    before = len(agent.received)
    r = await send(owner, {"agent": "bot", "message": "  "})
    assert r.status_code == 400 and "send needs a message, files or data" in r.text
    assert len(agent.received) == before


async def test_question_answered_inline(owner: AsyncClient, tool: A2ATool, ws: Workspace, agent: TestAgent) -> None:
    add_agent(ws, agent)
    r = await send(owner, {"agent": "bot", "message": "ask"})
    assert "Which colour?" in r.text and 'name="task_id"' in r.text
    task_id = agent.received[-1].task_id
    r = await send(owner, {"agent": "bot", "message": "green", "task_id": task_id})
    assert "got answer: green" in r.text


async def test_file_artifact_downloadable_and_confined(
    owner: AsyncClient, tool: A2ATool, ws: Workspace, agent: TestAgent
) -> None:
    add_agent(ws, agent, key=KEY)
    r = await send(owner, {"agent": "bot", "message": "file"})
    assert "/files/console/inbox/a2a/bot/report.pdf" in r.text
    got = await owner.get("/files/console/inbox/a2a/bot/report.pdf")
    assert got.status_code == 200 and b"".join(got.streaming_content).startswith(b"%PDF")
    for bad in [".volcanic/a2a/agents.json", "inbox/a2a/../../.volcanic/a2a/agents.json", "/etc/passwd"]:
        assert (await owner.get(f"/files/console/{bad}")).status_code == 404, bad


async def test_agent_page_shows_card_skills_examples(
    owner: AsyncClient, tool: A2ATool, ws: Workspace, agent: TestAgent
) -> None:
    add_agent(ws, agent, key=KEY)
    r = await owner.get("/agent/bot/")
    assert r.status_code == 200
    assert "Echo" in r.text and "Repeats what it is told" in r.text
    assert "/chat/console/?agent=bot&amp;message=hello%20there" in r.text
    assert "Streaming" in r.text and KEY not in r.text
    assert "version 1.0.0" in r.text and "A scripted agent for tests" in r.text and "Tags: test" in r.text
    assert "The whole card (JSON)" in r.text and "defaultInputModes" in r.text
    page = await owner.get("/chat/console/?agent=bot&message=hello%20there")
    assert "hello there</textarea>" in page.text
    ws.save_agents([{"name": "bot", "url": "http://127.0.0.1:9/"}], None)
    r = await owner.get("/agent/bot/")
    assert "Unreachable" in r.text


async def test_watch_table_search_recheck_cancel(
    owner: AsyncClient, tool: A2ATool, ws: Workspace, agent: TestAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_agent(ws, agent)
    tool.settings = replace(CONSOLE_SETTINGS, wait_seconds=0.2)
    r = await send(owner, {"agent": "bot", "message": "hold g1"})
    assert "working" in r.text
    [record] = pending.read(ws).records
    page = await owner.get("/watches/")
    assert record.task_id in page.text and "Re-check" in page.text and "Send again" in page.text
    assert record.task_id not in (await owner.get("/watches/?q=agent:other")).text
    assert record.task_id in (await owner.get(f"/watches/?q=source:{record.source} {record.task_id[:6]}")).text
    r = await owner.post(
        "/watches/action/", {"watch": record.watch_id, "action": "status"}, headers={"HX-Request": "1"}
    )
    assert 'id="watch-answer"' in r.text and "working" in r.text
    r = await owner.post("/watches/action/", {"watch": record.watch_id, "action": "again"}, headers={"HX-Request": "1"})
    assert "Send again" in r.text and "working" in r.text
    assert len(agent.received) == 2 and agent.received[-1].text == "hold g1"
    again = [x for x in pending.read(ws).records if x.watch_id != record.watch_id]
    assert len(again) == 1 and again[0].task_id != record.task_id
    r = await owner.post("/watches/action/", {"watch": record.watch_id, "action": "cancel"})
    assert "canceled" in r.text
    assert [x.watch_id for x in pending.read(ws).records] == [again[0].watch_id]
    r = await owner.get(f"/tasks/bot/{record.task_id}/?target=console")
    assert r.status_code == 200 and record.task_id in r.text
    agent.release("g1")


async def test_watch_table_cancel_says_what_the_tool_says(
    owner: AsyncClient, tool: A2ATool, ws: Workspace, agent: TestAgent
) -> None:
    """The Cancel button answers as the tool and the API do (#25 item 4): only requested, the watch goes on;
    refused, it goes on; canceled, it ends."""
    add_agent(ws, agent)
    tool.settings = replace(CONSOLE_SETTINGS, wait_seconds=0.2)
    await send(owner, {"agent": "bot", "message": "hold c1"})
    [record] = pending.read(ws).records
    cancel = {"watch": record.watch_id, "action": "cancel"}
    agent.cancel_answer = "working"
    r = await owner.post("/watches/action/", cancel, headers={"HX-Request": "1"})
    assert "cancel requested; the task is still working" in r.text, r.text
    assert [x.watch_id for x in pending.read(ws).records] == [record.watch_id]
    assert "cancel requested" in (await owner.get("/watches/")).text
    agent.cancel_answer = "refuse"
    r = await owner.post("/watches/action/", cancel, headers={"HX-Request": "1"})
    assert "the agent refused to cancel" in r.text, r.text
    assert [x.watch_id for x in pending.read(ws).records] == [record.watch_id]
    agent.cancel_answer = ""
    r = await owner.post("/watches/action/", cancel, headers={"HX-Request": "1"})
    assert "canceled" in r.text and pending.read(ws).records == []
    agent.release("c1")


async def test_status_page_masks(owner: AsyncClient, tool: A2ATool, ws: Workspace, agent: TestAgent) -> None:
    # distinctive secrets: short ones ("pw") turn up by chance in random tokens on the page
    url = "http://url-user:url-password-secret@127.0.0.1:5/a2a?key=query-secret-value"
    ws.save_agents([{"name": "bot", "url": url, "key": KEY}], None)
    r = await owner.get("/a2a")
    assert "http://127.0.0.1:5/a2a" in r.text and "key set" in r.text
    for secret in (KEY, "url-user", "url-password-secret", "query-secret-value"):
        assert secret not in r.text


async def test_dashboard_and_inbox_show_what_needs_the_owner(
    owner: AsyncClient, tool: A2ATool, ws: Workspace, console_target: ChatTarget
) -> None:
    from a2aconsole.core.pending.records import WatchRecord
    from a2aconsole.web.models import InboxItem

    await sync_to_async(record_event)(ws, "q1", "question", "input-required", "Which colour?")
    await sync_to_async(InboxItem.objects.create)(
        target=console_target, agent="bot", task_id="t9", state="completed", text="done!"
    )
    async with pending.transaction(ws) as tx:
        tx.add(WatchRecord("w9", "console", "bot", "t8", undelivered="kept result text"))
    ws.agents_path.parent.mkdir(parents=True, exist_ok=True)
    ws.agents_path.write_text("[oops")
    r = await owner.get("/")
    assert "Which colour?" in r.text and 'name="task_id" value="q1"' in r.text
    assert "Results not delivered yet" in r.text and "not valid JSON" in r.text
    r = await owner.get("/inbox/console/")
    assert "done!" in r.text and "kept result text" in r.text
    r = await owner.get("/tasks/bot/q1/")
    assert "Which colour?" in r.text and "input-required" in r.text


async def test_agent_page_shows_extended_card_with_key(
    owner: AsyncClient, tool: A2ATool, ws: Workspace, make_agent: Callable[..., TestAgent]
) -> None:
    agent = make_agent(key=KEY, extended=True)
    add_agent(ws, agent, key=KEY)
    r = await owner.get("/agent/bot/")
    assert "Only for key holders" in r.text and "fetched with the key" in r.text
    assert KEY not in r.text


async def test_task_page_recheck_shows_the_raw_task_and_only_fitting_actions(
    owner: AsyncClient, tool: A2ATool, ws: Workspace, make_agent: Callable[..., TestAgent]
) -> None:
    agent = make_agent(key=KEY)
    add_agent(ws, agent, key=KEY)
    tool.settings = replace(CONSOLE_SETTINGS, wait_seconds=0.2)
    await send(owner, {"agent": "bot", "message": "hold t1"})
    task_id = agent.received[-1].task_id
    page = await owner.get(f"/tasks/bot/{task_id}/?target=console")
    assert "Cancel the task" in page.text and "Last recorded event" in page.text
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d</time>", page.text)  # timeline times carry the date
    r = await owner.post(
        f"/tasks/bot/{task_id}/act/", {"action": "status", "target": "console"}, headers={"HX-Request": "true"}
    )
    assert 'id="task-answer"' in r.text and 'id="task-raw" hx-swap-oob="true"' in r.text
    assert "as the agent returned it" in r.text and "TASK_STATE_WORKING" in r.text and task_id in r.text
    assert KEY not in r.text
    r = await owner.post(f"/tasks/bot/{task_id}/act/", {"action": "cancel", "target": "console"})
    assert "TASK_STATE_CANCELED" in r.text and "Cancel the task" not in r.text
    assert "Continue this conversation" in r.text and "Answer the question" not in r.text


async def test_task_page_raw_json_masks_the_workspace_push_tokens(
    owner: AsyncClient, tool: A2ATool, ws: Workspace, make_agent: Callable[..., TestAgent]
) -> None:
    """The raw task JSON is the agent's own text: an agent echoing a push token (which it knows) shows only ***."""
    from a2aconsole.core.pending.records import WatchRecord

    token = "push-token-" + "p" * 32
    async with pending.transaction(ws) as tx:
        tx.add(WatchRecord("w-other", "console", "bot", "t-other", push_token=token, source="push"))
    agent = make_agent()
    add_agent(ws, agent)
    await send(owner, {"agent": "bot", "message": f"hello {token}"})
    task_id = agent.received[-1].task_id
    r = await owner.post(f"/tasks/bot/{task_id}/act/", {"action": "status", "target": "console"})
    assert "as the agent returned it" in r.text and task_id in r.text
    assert token not in r.text and "***" in r.text
