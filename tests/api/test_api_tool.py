"""The JSON tool API end to end: HTTP in, the real tool and runtime, real loopback agents out."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.testing import ApplicationCommunicator
from django.test import AsyncClient

from a2aconsole.asgi import application
from a2aconsole.core import pending
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.inbound import start_listening, stop_listening
from a2aconsole.web.models import ApiToken, ChatTarget
from tests.support.agents import TestAgent
from tests.support.api_host import Host, make_host
from tests.support.fasta2a_agents import Fasta2aAgent
from tests.support.toolkit import entry, write_agents
from tests.support.watching import eventually

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "agent-key-never-shown-123"


@pytest.fixture
def echo(workspace: Workspace, make_agent: Callable[..., TestAgent]) -> TestAgent:
    agent = make_agent(key=KEY)
    write_agents(workspace, entry("echo", agent, key=KEY))
    return agent


async def test_agents_action_lists_agents_without_keys(host: Host, echo: TestAgent) -> None:
    status, result = await host.call({"action": "agents"})
    assert status == 200
    [agent] = result["agents"]
    assert agent["name"] == "echo" and agent["skills"]
    assert KEY not in json.dumps(result)


async def test_send_then_continue_the_context(host: Host, echo: TestAgent) -> None:
    status, first = await host.call({"action": "send", "agent": "echo", "message": "hello there"})
    assert status == 200 and first["state"] == "completed" and first["text"] == "echo: hello there"
    status, second = await host.call(
        {"action": "send", "agent": "echo", "message": "hello again", "contextId": first["contextId"]}
    )
    assert second["contextId"] == first["contextId"] and second["text"] == "echo: hello again"
    assert echo.received[0].headers["x-api-key"] == KEY  # the key went to the agent, never to the host
    assert KEY not in json.dumps([first, second])


async def test_send_with_files_and_a_file_artifact(host: Host, echo: TestAgent, workspace: Workspace) -> None:
    (workspace.root / "notes.txt").write_text("my notes", encoding="utf-8")
    _, sent = await host.call({"action": "send", "agent": "echo", "message": "hello", "files": ["notes.txt"]})
    assert sent["state"] == "completed"
    assert echo.received[0].parts[1]["filename"] == "notes.txt"
    _, got = await host.call({"action": "send", "agent": "echo", "message": "file"})
    assert got["state"] == "completed" and any(f.endswith(".pdf") for f in got["files"])
    assert (workspace.root / got["files"][0]).is_file()


async def test_question_answered_with_task_id(host: Host, echo: TestAgent) -> None:
    _, asked = await host.call({"action": "send", "agent": "echo", "message": "ask"})
    assert asked["state"] == "input-required" and "Which colour?" in json.dumps(asked)
    _, done = await host.call({"action": "send", "agent": "echo", "message": "blue", "taskId": asked["taskId"]})
    assert done["state"] == "completed" and done["text"] == "got answer: blue"


async def test_a_follow_up_the_agent_took_as_a_new_task_says_so(
    host: Host, workspace: Workspace, fasta2a_agent: Fasta2aAgent
) -> None:
    """fasta2a opens a new task for every message: the answer names both tasks (openapi.json describes them)."""
    write_agents(workspace, entry("fa", fasta2a_agent))
    _, asked = await host.call({"action": "send", "agent": "fa", "message": "ask"})
    assert asked["state"] == "input-required", asked
    follow_up = {"action": "send", "agent": "fa", "message": "blue", "taskId": asked["taskId"]}
    _, done = await host.call({**follow_up, "contextId": asked["contextId"]})
    assert done["state"] == "completed" and done["text"] == "got answer: blue" and done["taskId"] != asked["taskId"]
    assert done["previousTaskId"] == asked["taskId"] and done["newTask"].startswith("the agent started a new task")


async def test_status_and_cancel_of_a_running_task(host: Host, echo: TestAgent, workspace: Workspace) -> None:
    from a2aconsole.core.remote.client import Remote
    from a2aconsole.core.remote.http import new_http_client
    from tests.support.watching import start_task

    http = new_http_client()
    try:
        task = await start_task(Remote(http, 10, 5), workspace, "echo", "hold gate")
    finally:
        await http.aclose()
    _, status = await host.call({"action": "status", "agent": "echo", "taskId": task.id})
    assert status["state"] == "working" and status["taskId"] == task.id
    _, canceled = await host.call({"action": "cancel", "agent": "echo", "taskId": task.id})
    assert canceled["state"] == "canceled"


async def test_tool_errors_are_results(host: Host, echo: TestAgent) -> None:
    status, result = await host.call({"action": "send", "agent": "nobody", "message": "hi"})
    assert status == 200 and 'unknown agent "nobody"' in result["error"]


async def test_tokens_missing_wrong_revoked_or_other_targets_get_a_bare_401(
    host: Host, echo: TestAgent, workspace: Workspace
) -> None:
    other = await make_host(workspace, "other")
    revoked = await make_host(workspace, "gone")
    await sync_to_async(lambda: ApiToken.objects.get(target_id="gone").revoke())()
    body = {"action": "send", "agent": "echo", "message": "hello"}
    answers = [
        await host.call(body, token=""),
        await host.call(body, token="a2ac_not-a-real-token"),
        await host.call(body, token=other.token),  # a valid token, for another target
        await revoked.call(body),
        await host.call(body, target="nope"),
    ]
    assert answers == [(401, {"error": "unauthorized"})] * 5
    resp = await host.client.post(
        "/api/v1/targets/bot/tool", b"{}", content_type="application/json", headers={"Authorization": host.token}
    )
    assert resp.status_code == 401 and resp["WWW-Authenticate"].startswith("Bearer")
    assert echo.received == []


async def test_disabled_target_is_refused(host: Host, echo: TestAgent) -> None:
    await ChatTarget.objects.filter(pk="bot").aupdate(enabled=False)
    assert (await host.call({"action": "agents"}))[0] == 403
    assert echo.requests == []


BAD_BODIES: list[tuple[Any, str | None, str]] = [
    (b"not json", None, "not valid JSON"),
    ([1, 2], None, "must be a JSON object"),
    ({"action": "send", "agent": "echo", "message": "hi", "task_id": "x"}, "task_id", "unknown field"),
    ({"agent": "echo"}, "action", "action is required"),
    ({"action": "explode"}, "action", "must be one of agents, send, status, cancel"),
    ({"action": "send", "agent": "echo"}, "message", "send needs a message, files or data"),
    ({"action": "send", "message": "hi"}, "agent", "agent is required"),
    ({"action": "send", "agent": 7, "message": "hi"}, "agent", "agent must be a string"),
    ({"action": "status", "agent": "echo"}, "taskId", "taskId is required"),
    ({"action": "send", "agent": "echo", "message": "hi", "files": "a.txt"}, "files", "files must be a list"),
    ({"action": "send", "agent": "echo", "message": "hi", "hops": -1}, "hops", "hops must be a whole number"),
    ({"action": "send", "agent": "echo", "message": "hi", "hops": True}, "hops", "hops must be a whole number"),
    ({"action": "send", "agent": "echo", "message": "hi", "hops": "2"}, "hops", "hops must be a whole number"),
]


async def test_bad_bodies_get_400_with_field_and_nothing_is_sent(host: Host, echo: TestAgent) -> None:
    for body, field, problem in BAD_BODIES:
        status, answer = await host.call(body)
        assert status == 400, body
        assert answer["field"] == field and problem in answer["error"], (body, answer)
    assert echo.requests == []


async def test_hops_set_by_the_call_are_incremented_and_kept(host: Host, echo: TestAgent) -> None:
    await host.call({"action": "send", "agent": "echo", "message": "hello", "hops": 3})
    await host.call({"action": "send", "agent": "echo", "message": "hello"})  # no hops: the last inbound stays
    assert [r.metadata["volcanic.hops"] for r in echo.received] == [4, 4]
    assert (await ChatTarget.objects.aget(pk="bot")).inbound_hops == 3
    await host.call({"action": "send", "agent": "echo", "message": "hello", "hops": 0})
    assert echo.received[-1].metadata["volcanic.hops"] == 1


async def test_hops_from_inbound_event(host: Host, echo: TestAgent) -> None:
    """An `a2a.inbound` channel-layer message sets the hops the next send carries (the serving process listens)."""
    await start_listening()
    try:
        saved = await watch_hops("bot", 5)
        await get_channel_layer().send("a2a-inbound", {"type": "a2a.inbound", "target": "bot", "hops": 5})
        await saved()
    finally:
        await stop_listening()
    await host.call({"action": "send", "agent": "echo", "message": "hello"})
    assert echo.received[-1].metadata["volcanic.hops"] == 6


async def test_inbound_consumer_for_runworker(host: Host, echo: TestAgent, caplog) -> None:
    """The same message through the routed consumer (`manage.py runworker a2a-inbound`); bad ones are dropped."""
    worker = ApplicationCommunicator(application, {"type": "channel", "channel": "a2a-inbound"})
    saved = await watch_hops("bot", 2)
    await worker.send_input({"type": "a2a.inbound", "target": "bot", "hops": "two"})
    await worker.send_input({"type": "a2a.inbound", "target": "nope", "hops": 1})
    await worker.send_input({"type": "a2a.inbound", "target": "bot", "hops": 2})
    await saved()
    worker.stop()
    assert "dropped" in caplog.text and "unknown target nope" in caplog.text
    await host.call({"action": "send", "agent": "echo", "message": "hello"})
    assert echo.received[-1].metadata["volcanic.hops"] == 3


async def watch_hops(target: str, hops: int) -> Callable[[], Any]:
    """An awaitable that completes when the target is saved with `hops` (a post_save signal, no polling)."""
    import asyncio

    from django.db.models.signals import post_save

    loop = asyncio.get_running_loop()
    done = asyncio.Event()

    def saved(sender: Any, instance: ChatTarget, **kwargs: Any) -> None:
        if instance.pk == target and instance.inbound_hops == hops:
            loop.call_soon_threadsafe(done.set)

    post_save.connect(saved, sender=ChatTarget, weak=False)

    async def wait() -> None:
        try:
            await eventually(done.wait, what=f"target {target} saved with {hops} inbound hops", timeout=10)
        finally:
            post_save.disconnect(saved, sender=ChatTarget)

    return wait


async def test_tool_schema_and_openapi_are_public() -> None:
    client = AsyncClient()
    schema = json.loads((await client.get("/api/v1/tool-schema")).content)
    assert schema["name"] == "a2a" and schema["parameters"]["properties"]["action"]["enum"] == [
        "agents",
        "send",
        "status",
        "cancel",
        "unwatch",
    ]
    doc = json.loads((await client.get("/api/v1/openapi.json")).content)
    assert doc["openapi"] == "3.1.0"
    op = doc["paths"]["/api/v1/targets/{targetId}/tool"]["post"]
    assert op["security"] == [{"bearer": []}] and {"200", "400", "401", "403", "413", "503"} <= set(op["responses"])
    assert doc["components"]["schemas"]["ToolCall"]["properties"]["hops"]["minimum"] == 0
    assert (await client.post("/api/v1/tool-schema")).status_code == 405


async def test_cancel_says_what_happened(host: Host, echo: TestAgent, workspace: Workspace, remote) -> None:
    """The API answers a cancel as the tool does: requested (the watch goes on, marked), refused, canceled."""
    from a2aconsole.core.tool.cancel import CANCEL_REQUESTED
    from tests.support.clock import FakeClock
    from tests.support.watching import add_record, start_task

    task = await start_task(remote, workspace, "echo", "hold api-cancel")
    await add_record(workspace, task, "echo", FakeClock(), target="bot")  # the host's chat watches it
    cancel = {"action": "cancel", "agent": "echo", "taskId": task.id}
    echo.cancel_answer = "working"
    _, asked = await host.call(cancel)
    assert asked["state"] == "working" and asked["watch"] == "goes on", asked
    assert asked["note"].startswith("cancel requested; the task is still working")
    [watch] = pending.read(workspace).records
    assert CANCEL_REQUESTED in watch.extra
    echo.cancel_answer = "refuse"
    _, refused = await host.call(cancel)
    assert refused["watch"] == "goes on" and refused["note"].startswith("the agent refused to cancel"), refused
    echo.cancel_answer = ""
    _, canceled = await host.call(cancel)
    assert canceled["state"] == "canceled" and canceled["watch"] == "canceled", canceled
    assert pending.read(workspace).records == []
