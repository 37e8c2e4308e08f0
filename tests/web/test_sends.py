"""The console's own sends (`web.sends`): the POST returns before the agent answers, the message is kept until
the agent has it, a failure keeps it with its reason, Retry and Edit send the same parts, Re-send starts anew.
Through the Django async test client against a real loopback agent and the real tool."""

from __future__ import annotations

from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import AsyncClient
from django.utils import timezone

from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.tool.tool import A2ATool
from a2aconsole.web import broadcast, sends
from a2aconsole.web.models import OutgoingMessage, TaskEvent
from tests.support.agents import TestAgent
from tests.support.console import add_agent

pytestmark = pytest.mark.django_db(transaction=True)

HX = {"HX-Request": "true", "HX-Target": "chat-log"}
DOWN = "http://127.0.0.1:9/"


async def settle() -> None:
    await sends.settled()
    await broadcast.flush()


async def rows() -> list[OutgoingMessage]:
    return await sync_to_async(lambda: list(OutgoingMessage.objects.order_by("id")))()


async def test_the_post_returns_before_the_agent_answers(
    owner: AsyncClient, tool: A2ATool, ws: Workspace, agent: TestAgent
) -> None:
    add_agent(ws, agent)
    agent.hold_methods.add("SendMessage")  # the agent has not answered the send yet
    try:
        r = await owner.post("/chat/console/send/", {"agent": "bot", "message": "hold quick1"}, headers=HX)
        assert r.status_code == 200 and "hold quick1" in r.text and "sending…" in r.text
        [row] = await rows()
        assert row.state == OutgoingMessage.SENDING
    finally:
        agent.hold_methods.discard("SendMessage")
        agent.release("calls")
    agent.release("quick1")
    await settle()
    assert await rows() == []  # the agent has it: its `sent` event took the row's place
    sent = await sync_to_async(lambda: TaskEvent.objects.get(kind="sent", text="hold quick1"))()
    assert sent.data.get("outgoing") == row.id and sent.task_id
    page = (await owner.get("/chat/console/")).text
    assert "released quick1" in page and "sending…" not in page and 'class="task-card state-completed"' in page


async def test_a_failed_send_keeps_its_parts_and_retry_sends_them_again(
    owner: AsyncClient, tool: A2ATool, ws: Workspace, agent: TestAgent
) -> None:
    ws.save_agents([{"name": "bot", "url": DOWN}], None)
    upload = SimpleUploadedFile("notes.txt", b"my notes", content_type="text/plain")
    await owner.post("/chat/console/send/", {"agent": "bot", "message": "keep me", "files": [upload]}, headers=HX)
    await settle()
    [row] = await rows()
    assert row.state == OutgoingMessage.FAILED and "bot" in row.error and len(row.files) == 1
    page = (await owner.get("/chat/console/")).text
    assert "not sent" in page and "keep me" in page and f"/chat/console/outgoing/{row.id}/retry/" in page
    edit = (await owner.get(f"/chat/console/?edit={row.id}")).text
    assert "keep me</textarea>" in edit and f'value="{row.files[0]}" checked' in edit
    ws.save_agents([{"name": "bot", "url": agent.url}], ws.read_agents().version)
    r = await owner.post(f"/chat/console/outgoing/{row.id}/retry/", {}, headers=HX)
    assert r.status_code == 200
    await settle()
    assert await rows() == []
    assert agent.received[-1].text == "keep me" and len(agent.received[-1].parts) == 2  # text and the file
    # a message that is not failed cannot be retried, nor one of another chat
    assert (await owner.post(f"/chat/console/outgoing/{row.id}/retry/", {})).status_code == 404


async def test_an_edited_send_takes_the_failed_ones_place(
    owner: AsyncClient, tool: A2ATool, ws: Workspace, agent: TestAgent
) -> None:
    ws.save_agents([{"name": "bot", "url": DOWN}, {"name": "good", "url": agent.url}], None)
    await owner.post("/chat/console/send/", {"agent": "bot", "message": "first try"}, headers=HX)
    await settle()
    [failed] = await rows()
    data = {"agent": "good", "message": "second try", "edit": str(failed.id)}
    await owner.post("/chat/console/send/", data, headers=HX)
    await settle()
    assert await rows() == [] and agent.received[-1].text == "second try"


async def test_a_send_left_by_a_stopped_console_shows_as_not_sent(
    owner: AsyncClient, tool: A2ATool, ws: Workspace
) -> None:
    def left() -> OutgoingMessage:
        return OutgoingMessage.objects.create(
            target_id="console", agent="bot", text="lost in a crash", created_at=timezone.now() - timedelta(hours=1)
        )

    row = await sync_to_async(left)()
    assert sends.shown_state(row) == (OutgoingMessage.FAILED, sends.INTERRUPTED)
    page = (await owner.get("/chat/console/")).text
    assert "lost in a crash" in page and "not sent" in page and "the console stopped" in page
    r = await owner.post(f"/chat/console/outgoing/{row.id}/discard/", {}, headers=HX)
    assert r.status_code == 200 and "lost in a crash" not in r.text and await rows() == []


async def test_resend_starts_a_new_task_with_the_same_parts(
    owner: AsyncClient, tool: A2ATool, ws: Workspace, agent: TestAgent
) -> None:
    add_agent(ws, agent)
    upload = SimpleUploadedFile("a.txt", b"aaa", content_type="text/plain")
    await owner.post("/chat/console/send/", {"agent": "bot", "message": "do it", "files": [upload]}, headers=HX)
    await settle()

    def sent() -> list[TaskEvent]:
        return list(TaskEvent.objects.filter(kind="sent", text="do it").order_by("id"))

    [first] = await sync_to_async(sent)()
    assert first.data["files"] and first.task_id
    data = {"agent": "bot", "task": first.task_id, "same_context": "1"}
    r = await owner.post("/chat/console/resend/", data, headers=HX)
    assert r.status_code == 200
    await settle()
    [_, again] = await sync_to_async(sent)()
    assert again.task_id != first.task_id and again.context_id == first.context_id
    assert again.data["files"] == first.data["files"] and len(agent.received[-1].parts) == 2  # text and file
    assert (await owner.post("/chat/console/resend/", {"agent": "bot", "task": "nope"})).status_code == 404
