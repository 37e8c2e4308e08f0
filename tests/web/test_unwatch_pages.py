"""Stop watching in the console: the watch row and the task page offer it (asking first), the owner's stop ends
the watch "stopped", the timeline says who stopped it and when, and the task's result, once it finishes at the
agent, is not delivered to the chat."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import AsyncClient
from django.utils import timezone

from a2aconsole.core import pending
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.models import ChatTarget, InboxItem
from tests.support.runtime import fresh_runtime
from tests.support.watching import SignalClock, WaitableSink, add_record, eventually, start_task

SETTINGS = ClientSettings(wait_seconds=0.2, card_timeout_seconds=3, call_timeout=10)
pytestmark = pytest.mark.django_db(transaction=True)


def timeline_of(html: str) -> str:
    start = html.index('id="timeline-log"')
    return re.sub(r"<[^>]+>|\s+", " ", html[start : html.index("</ol>", start)])


@pytest.mark.parametrize("where", ["watch table", "task page"])
async def test_the_owner_stops_watching_and_nothing_more_is_delivered(
    where: str, ws: Workspace, console_target: ChatTarget, make_sdk_agent, remote: Any, owner: AsyncClient
) -> None:
    from a2aconsole.web.broadcast import ChannelsBroadcast

    agent = make_sdk_agent(push=False, streaming=False)
    ws.save_agents([{"name": "bot", "url": agent.url}], None)
    task = await start_task(remote, ws, "bot", "hold unwatch")
    clock = SignalClock()
    rec = await add_record(ws, task, "bot", clock, target="console")
    events = WaitableSink(ChannelsBroadcast())
    async with fresh_runtime(client_settings=SETTINGS, events=events, clock=clock) as rt:
        registry = await rt.start_registry([ws])  # restores the watch, which checks at once, then naps 15 s
        await clock.until(lambda s: 15.0 in s)
        page_url = f"/tasks/bot/{task.id}/?target=console"
        watched = (await owner.get(page_url)).content.decode()
        assert 'aria-label="Stop watching the task…">Stop watching…</summary>' in watched
        assert 'value="unwatch"' in watched and "its result will not come here" in watched
        table = (await owner.get("/watches/")).content.decode()
        assert f'aria-label="Yes, stop watching task {task.id}"' in table

        if where == "watch table":
            answer = await owner.post("/watches/action/", {"action": "unwatch", "watch": rec.watch_id})
        else:
            answer = await owner.post(f"/tasks/bot/{task.id}/act/", {"action": "unwatch", "target": "console"})
        said = answer.content.decode()
        assert "Stopped watching: bot goes on with the task" in said and "It did not work" not in said
        assert pending.read(ws).records == [] and rec.watch_id not in registry
        await events.until_kind("watch.ended")
        stopped_at = f"{timezone.localtime(clock.now()):%H:%M}"
        html = (await owner.get(page_url)).content.decode()
        assert f"Stopped watching (by you, {stopped_at})" in timeline_of(html)
        assert "Stop watching…" not in html  # nothing left to stop
        assert f'id="watch-{rec.watch_id}"' not in (await owner.get("/watches/")).content.decode()

        agent.release("unwatch")  # the task goes on at the agent and finishes there
        await eventually(lambda: task.id in agent.finished, what="the agent to finish")
        await clock.advance(600)
        assert "delivered" not in [e.kind for e in events.events]
    assert [i async for i in InboxItem.objects.filter(task_id=task.id)] == []
