"""`A2AClient__Enabled=false`: the pages work and cards are read, but nothing is sent and no watch is armed or
woken. `send`, `status` and `cancel` answer "the A2A client is off" on every path: the tool, the JSON API, the
console's forms, the CLI; the worker restores nothing and delivers nothing."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator, Iterator

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import AsyncClient, override_settings

from a2aconsole.core import pending
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.records import WatchRecord
from a2aconsole.core.tool.tool import CLIENT_OFF
from a2aconsole.web.chats import aresolve
from a2aconsole.web.models import ApiToken, ChatTarget
from a2aconsole.web.process.runtime import WORKER_CHANNEL, Runtime
from a2aconsole.web.process.worker import handle
from tests.support.agents import TestAgent
from tests.support.console import add_agent, create_owner
from tests.support.runtime import fresh_runtime
from tests.support.sends import send
from tests.support.watching import start_task

pytestmark = pytest.mark.django_db(transaction=True)

OFF = ClientSettings(enabled=False, wait_seconds=3, card_timeout_seconds=3, call_timeout=10)
CALLS = [
    ("send", {"agent": "bot", "message": "hello off"}),
    ("status", {"agent": "bot", "taskId": "t-1"}),
    ("cancel", {"agent": "bot", "taskId": "t-1"}),
]


@pytest.fixture
def off(ws: Workspace, agent: TestAgent) -> Iterator[Workspace]:
    """The client off in this process; the console's workspace lists `bot`."""
    add_agent(ws, agent)
    with override_settings(A2A_CLIENT=OFF):
        yield ws


@pytest.fixture
async def off_runtime(off: Workspace) -> AsyncIterator[Runtime]:
    layer = get_channel_layer()
    await layer.flush()
    async with fresh_runtime(client_settings=OFF) as rt:
        yield rt


def worker_messages() -> int:
    """Wake-ups waiting for a watch worker on this process's in-memory channel layer."""
    queue = get_channel_layer().channels.get(WORKER_CHANNEL)
    return 0 if queue is None else queue.qsize()


def sent_nothing(agent: TestAgent, ws: Workspace) -> bool:
    return agent.received == [] and "SendMessage" not in agent.methods and pending.read(ws).records == []


async def test_tool_refuses_send_status_cancel_and_still_lists_agents(
    off_runtime: Runtime, off: Workspace, agent: TestAgent
) -> None:
    for action, args in CALLS:
        assert await off_runtime.tool.run(action, args, await aresolve("console")) == {"error": CLIENT_OFF}, action
    [listed] = (await off_runtime.tool.run("agents", {}, await aresolve("console")))["agents"]
    assert listed["name"] == "bot" and listed["skills"]  # cards are read: the pages still show the agents
    assert sent_nothing(agent, off)


async def test_json_api_says_off_and_wakes_no_worker(off_runtime: Runtime, off: Workspace, agent: TestAgent) -> None:
    target = await ChatTarget.objects.acreate(id="host", name="Host", workspace=str(off.root))
    _, token = await sync_to_async(ApiToken.issue)(target, "test host")
    client = AsyncClient()
    for action, args in CALLS:
        resp = await client.post(
            "/api/v1/targets/host/tool",
            json.dumps({"action": action, **args}),
            content_type="application/json",
            headers={"Authorization": f"Bearer {token}"},
        )
        assert resp.status_code == 200 and resp.json() == {"error": CLIENT_OFF}, action
    off_runtime.request_flush(await aresolve("host"))  # a session start: no worker runs to flush kept results
    assert worker_messages() == 0
    assert sent_nothing(agent, off)


async def test_console_pages_work_and_forms_say_off(
    off_runtime: Runtime, off: Workspace, agent: TestAgent, console_target: ChatTarget
) -> None:
    owner = AsyncClient()
    await owner.aforce_login(await sync_to_async(create_owner)())
    for url in ("/", "/agents/", "/chat/console/", "/watches/", "/a2a", "/inbox/console/"):
        assert (await owner.get(url)).status_code == 200, url
    detail = await owner.get("/agent/bot/")
    assert detail.status_code == 200 and "Echo" in detail.text and CLIENT_OFF not in detail.text  # skills shown
    upload = SimpleUploadedFile("notes.txt", b"my notes", content_type="text/plain")
    r = await send(owner, {"agent": "bot", "message": "hello off", "files": [upload]})
    assert r.status_code == 400 and "the A2A client is off" in r.text
    assert not list(off.root.rglob("notes*"))  # the upload was not even saved
    r = await owner.post("/tasks/bot/t-1/act/", {"action": "cancel", "target": "console"})
    assert "the A2A client is off" in r.text
    assert sent_nothing(agent, off)


def test_cli_says_off(off: Workspace, agent: TestAgent) -> None:
    for action, args in CALLS:
        out = io.StringIO()
        options = {"agent": args["agent"], "message": args.get("message"), "task_id": args.get("taskId")}
        call_command("a2a", action, stdout=out, **{k: v for k, v in options.items() if v})
        assert json.loads(out.getvalue()) == {"error": CLIENT_OFF}, action
    assert sent_nothing(agent, off)


async def test_worker_restores_and_delivers_nothing(off_runtime: Runtime, off: Workspace, agent: TestAgent) -> None:
    task = await start_task(off_runtime.remote, off, "bot", "hold off")  # started before the client was turned off
    async with pending.transaction(off) as tx:
        for i, kept in enumerate((None, "[A2A result] kept")):
            tx.add(WatchRecord(f"w{i}", "console", "bot", task.id, task.context_id, undelivered=kept))
    before = [r.to_json() for r in pending.read(off).records]
    for message in ({"type": "watch.rescan"}, {"type": "target.flush", "target": "console"}):
        await handle(message)
    assert off_runtime.registry is None and worker_messages() == 0
    assert [r.to_json() for r in pending.read(off).records] == before  # kept for when the client is on again
    assert agent.methods == ["SendMessage"]  # only the test's own start_task: no GetTask, no subscribe
