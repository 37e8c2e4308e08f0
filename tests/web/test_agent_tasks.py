"""Tasks at the agent (A2A ListTasks) on the agent's own page, on both SDKs' real agents: paged by the agent's
token, filtered by context and state; each row says whether the console knows the task; one it does not know is
watched (then known, its record in pending.json) or its result fetched; an agent without ListTasks says why."""

from __future__ import annotations

import html as html_lib
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
from a2aconsole.web.models import ChatTarget
from a2aconsole.web.views import agent_tasks
from tests.support.runtime import fresh_runtime
from tests.support.watching import SignalClock, WaitableSink, settled_at_agent, start_task

SETTINGS = ClientSettings(wait_seconds=0.2, card_timeout_seconds=3, call_timeout=10)
URL = "/agent/bot/tasks/"


def rows(page: str) -> dict[str, str]:
    """Each row's text, by the task id its short id carries in full (`data-copy`)."""
    body = page[page.index("<tbody>") : page.index("</tbody>")] if "<tbody>" in page else ""
    found = {}
    for tr in re.findall(r"<tr>(.*?)</tr>", body, re.S):
        [task_id] = re.findall(r'<td data-label="Task".*?data-copy="([^"]+)"', tr, re.S)[:1]
        found[html_lib.unescape(task_id)] = tr
    return found


@pytest.mark.django_db(transaction=True)
async def test_the_agents_tasks_are_listed_watched_and_fetched(
    ws: Workspace, console_target: ChatTarget, make_sdk_agent, remote: Any, owner: AsyncClient, monkeypatch
) -> None:
    agent = make_sdk_agent(push=False, streaming=False)
    ws.save_agents([{"name": "bot", "url": agent.url}], None)
    clock, events = SignalClock(), WaitableSink(ChannelsBroadcast())
    async with fresh_runtime(client_settings=SETTINGS, events=events, clock=clock) as rt:
        await rt.start_registry([ws])
        done = await start_task(remote, ws, "bot", "hello elsewhere")  # another client's tasks
        held = await start_task(remote, ws, "bot", "hold at")
        known = await start_task(remote, ws, "bot", "hello known")
        entry = ws.read_agents().get("bot")
        assert entry is not None
        conn = await remote.connect(entry)
        for t in (done, known):
            await settled_at_agent(conn, t.id, "completed")
        sent = Event("sent", str(ws.root), "bot", known.id, clock.now(), context_id=known.context_id, target="console")
        await sync_to_async(_store)(sent)  # the console sent this one

        agent_page = (await owner.get("/agent/bot/")).content.decode()
        assert f'href="{URL}"' in agent_page and "Tasks at the agent" in agent_page
        listed = (await owner.get(URL)).content.decode()
        found = rows(listed)
        assert set(found) == {done.id, held.id, known.id}
        assert "not known" in found[done.id] and ">Fetch result<" in found[done.id] and ">Watch<" not in found[done.id]
        assert "not known" in found[held.id] and ">Watch<" in found[held.id]
        assert ">known<" in found[known.id] and f'href="/tasks/bot/{known.id}/?target=console">Open<' in found[known.id]

        working = rows((await owner.get(URL, {"state": "working"})).content.decode())
        assert set(working) == {held.id}
        in_context = rows((await owner.get(URL, {"context": done.context_id})).content.decode())
        assert set(in_context) == {done.id}

        monkeypatch.setattr(agent_tasks, "PAGE_SIZE", 2)  # paged by the agent's own token
        first = (await owner.get(URL)).content.decode()
        [next_url] = re.findall(r'<a href="(\?page=[^"]+)" rel="next">Next page</a>', first)
        second = (await owner.get(URL + html_lib.unescape(next_url))).content.decode()
        assert len(rows(first)) == 2 and len(rows(second)) == 1
        assert set(rows(first)) | set(rows(second)) == {done.id, held.id, known.id}
        assert ">First page</a>" in second and 'rel="next"' not in second

        watched = await owner.post(f"/tasks/bot/{held.id}/act/", {"action": "watch", "target": "console"})
        page = watched.content.decode()
        assert (
            watched.status_code == 200
            and "<h2>Watch</h2>" in page
            and "watches the task now" in page
            and "Stop watching ends the watch" in page
        )
        assert "action=unwatch" not in page  # the tool's hint for agent hosts, said with the page's button
        [rec] = pending.read(ws).records
        assert (rec.task_id, rec.target) == (held.id, "console")
        fetched = (await owner.post(f"/tasks/bot/{done.id}/act/", {"action": "status", "target": "console"})).content
        assert "echo: hello elsewhere" in fetched.decode()

        monkeypatch.setattr(agent_tasks, "PAGE_SIZE", 20)
        after = rows((await owner.get(URL)).content.decode())
        assert all(">known<" in row for row in after.values()), after
        agent.release("at")


@pytest.mark.parametrize("sdk", ["python", "js", "python-0.3"])
@pytest.mark.django_db(transaction=True)
async def test_an_agent_without_list_tasks_says_why(
    ws: Workspace, console_target: ChatTarget, owner: AsyncClient, sdk: str, request: pytest.FixtureRequest
) -> None:
    if sdk == "python-0.3":
        agent, why = request.getfixturevalue("make_agent")(legacy=True), "it speaks A2A 0.3, which has no ListTasks"
    else:
        agent = request.getfixturevalue("make_agent" if sdk == "python" else "make_js_agent")(list_tasks=False)
        why = "it answers ListTasks with"
    ws.save_agents([{"name": "bot", "url": agent.url}], None)
    async with fresh_runtime(client_settings=SETTINGS):
        page = (await owner.get(URL)).content.decode()
    notice = re.search(r'<div class="notice error" role="alert">(.*?)</div>', page, re.S)
    assert notice is not None, page
    assert html_lib.unescape(notice.group(1)).startswith(f'agent "bot" does not list its tasks: {why}')
    assert "<tbody>" not in page


@pytest.mark.django_db(transaction=True)
async def test_an_unknown_agent_is_not_found(ws: Workspace, console_target: ChatTarget, owner: AsyncClient) -> None:
    async with fresh_runtime(client_settings=SETTINGS):
        assert (await owner.get("/agent/nobody/tasks/")).status_code == 404
