"""A lost task in the console: a real agent forgets a watched task; the watch ends "lost", one notice reaches the
chat's inbox, the task page shows lost with Re-send and no Cancel, the Tasks page shows lost, and a Re-check
(the agent does not know the task) does not bring it back."""

from __future__ import annotations

import re
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient

from a2aconsole.core import pending
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.events import Event
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.broadcast import ChannelsBroadcast, _store
from a2aconsole.web.models import ChatTarget, InboxItem
from tests.support.runtime import fresh_runtime
from tests.support.watching import SignalClock, WaitableSink, add_record, start_task

SETTINGS = ClientSettings(wait_seconds=0.2, card_timeout_seconds=3, call_timeout=10)


def text_of(html: str, start: str, end: str) -> str:
    part = html[html.index(start) : html.index(end, html.index(start))]
    return re.sub(r"<[^>]+>|\s+", " ", part)


@pytest.mark.django_db(transaction=True)
async def test_a_lost_task_shows_lost_with_resend_and_no_cancel(
    ws: Workspace, console_target: ChatTarget, make_agent, remote: Any, owner: AsyncClient
) -> None:
    agent = make_agent(push=False, streaming=False)
    ws.save_agents([{"name": "bot", "url": agent.url}], None)
    clock, events = SignalClock(), WaitableSink(ChannelsBroadcast())
    async with fresh_runtime(client_settings=SETTINGS, events=events, clock=clock) as rt:
        registry = await rt.start_registry([ws])
        task = await start_task(remote, ws, "bot", "hold lost")
        at, ctx = clock.now(), task.context_id
        sent = Event("sent", str(ws.root), "bot", task.id, at, context_id=ctx, target="console", text="hold lost")
        await sync_to_async(_store)(sent)  # as the tool's send records it: what Re-send sends again
        rec = await add_record(ws, task, "bot", clock, target="console")
        await registry.arm(ws, rec)
        await clock.until(lambda s: 15.0 in s)
        page_url = f"/tasks/bot/{task.id}/?target=console"
        running = (await owner.get(page_url)).content.decode()
        assert "Cancel the task" in running and ">Re-send<" not in running

        agent.forget()  # the agent restarted with an in-memory store
        await clock.advance(15)
        await events.until_kind("delivered")
        html = (await owner.get(page_url)).content.decode()
        rechecked = (
            await owner.post(f"/tasks/bot/{task.id}/act/", {"action": "status", "target": "console"})
        ).content.decode()
        tasks = (await owner.get("/tasks/")).content.decode()

    state = re.compile(r'id="task-state"><span data-task-state="lost" class="badge state-lost">lost</span>')
    assert state.search(html)
    assert 'class="badge state-lost"' in html
    assert "Cancel the task" not in html
    assert ">Re-send</button>" in html and 'formaction="/chat/console/resend/"' in html
    assert "Stopped following: lost (the agent no longer knows the task)" in text_of(html, 'id="timeline-log"', "</ol>")
    [item] = [i async for i in InboxItem.objects.filter(task_id=task.id)]
    assert item.text.startswith(f'[A2A: "bot" no longer knows task {task.id[:4]}… (it may have restarted)')

    assert "does not know that task" in rechecked  # the Re-check says so, and changes nothing
    assert state.search(rechecked) and "Cancel the task" not in rechecked
    assert pending.read(ws).records == []
    assert re.search(r'badge state-lost">lost', tasks)
    agent.release("lost")
