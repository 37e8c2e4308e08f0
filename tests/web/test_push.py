"""The push receiver served by the real ASGI app on loopback: agents POST to it, the web inbox gets the result."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator

import httpx
import pytest

from a2aconsole.asgi import application
from a2aconsole.core import pending
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending import WatchRecord
from a2aconsole.core.watches.follower import PUSH_SAFETY
from a2aconsole.web.broadcast import ChannelsBroadcast
from a2aconsole.web.models import ChatTarget, InboxItem, TaskEvent, TaskRecord
from a2aconsole.web.process.body_limit import body_cap
from a2aconsole.web.process.runtime import Runtime, build_runtime, close_runtime, install_runtime
from a2aconsole.web.views.push import refused_before_body
from tests.support.asgi import asgi_client, count_thread_hops
from tests.support.watching import LoopbackServer, SignalClock, WaitableSink, add_record, eventually, start_task

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
async def server() -> AsyncIterator[LoopbackServer]:
    async with LoopbackServer(application) as s:
        yield s


@pytest.fixture
def clock() -> SignalClock:
    return SignalClock()


@pytest.fixture
async def runtime_for(clock: SignalClock) -> AsyncIterator:
    async def make(push_base_url: str | None, workspaces: list[Workspace] | None) -> Runtime:
        cs = ClientSettings(push_base_url=push_base_url)
        rt = install_runtime(build_runtime(client_settings=cs, clock=clock, events=WaitableSink(ChannelsBroadcast())))
        if workspaces is not None:
            await rt.start_registry(workspaces)
        return rt

    yield make
    await close_runtime()


def chat(ws: Workspace, target_id: str = "chat1") -> ChatTarget:
    return ChatTarget.objects.create(id=target_id, name="Chat", workspace=str(ws.root), backend="web")


async def test_watch_push_delivers_to_web_inbox(make_sdk_agent, workspace, server, runtime_for, clock) -> None:
    """On both SDKs: the JS one posts `Content-Type: application/a2a+json`, the Python one `application/json`."""
    agent = make_sdk_agent(streaming=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    await ChatTarget.objects.acreate(id="chat1", name="Chat", workspace=str(workspace.root), backend="web")
    rt = await runtime_for(server.url, [workspace])
    task = await start_task(rt.remote, workspace, "bot", "hold w")
    rec = await add_record(workspace, task, "bot", clock)
    await rt.registry.arm(workspace, rec)
    await eventually(lambda: "GetTask" in agent.methods, what="the first check")

    agent.release("w")
    sink = rt.events
    assert isinstance(sink, WaitableSink)
    await sink.until(lambda: "delivered" in sink.kinds(), what="the result to be delivered")
    assert pending.read(workspace).records == []
    item = await InboxItem.objects.aget(target_id="chat1", watch_id=rec.watch_id)
    assert "released w" in item.text and item.state == "completed" and item.task_id == task.id
    kinds = [k async for k in TaskEvent.objects.filter(task_id=task.id).values_list("kind", flat=True)]
    assert kinds[0] == "watch.armed" and "result" in kinds and kinds[-1] == "delivered"
    assert clock.monotonic() == 0  # the push did it, not the 10-minute safety check
    token = rec.push_token or ""
    assert all(token not in json.dumps(e.data) for e in [e async for e in TaskEvent.objects.all()])


async def test_watch_push_bad_token_rejected_over_http(make_agent, workspace, server, runtime_for, clock) -> None:
    agent = make_agent(streaming=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    await ChatTarget.objects.acreate(id="chat1", name="Chat", workspace=str(workspace.root), backend="web")
    rt = await runtime_for(server.url, [workspace])
    task = await start_task(rt.remote, workspace, "bot", "hold bt")
    rec = await add_record(workspace, task, "bot", clock)
    await rt.registry.arm(workspace, rec)
    await eventually(lambda: "GetTask" in agent.methods, what="the first check")
    token = pending.read(workspace).records[0].push_token
    checks = agent.methods.count("GetTask")
    body = {"statusUpdate": {"taskId": task.id, "status": {"state": "TASK_STATE_COMPLETED"}}}
    url = f"{server.url}/a2a/push/{rec.watch_id}"
    async with httpx.AsyncClient() as http:
        r = await http.post(url, json=body, headers={"X-A2A-Notification-Token": "nope"})
        assert r.status_code == 404
        r = await http.post(url, json=body)
        assert r.status_code == 404
        r = await http.post(f"{server.url}/a2a/push/unknown", json=body, headers={"X-A2A-Notification-Token": token})
        assert r.status_code == 404
        r = await http.post(url, json={"task": {"id": "other"}}, headers={"X-A2A-Notification-Token": token})
        assert r.status_code == 400
        assert agent.methods.count("GetTask") == checks  # nothing happened
        r = await http.post(url, json=body, headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 200
        r = await http.post(url, json=body, headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 200  # idempotent: the same push again only wakes the watch again
        r = await http.get(url)
        assert r.status_code == 405
    await eventually(lambda: agent.methods.count("GetTask") >= checks + 1, what="the confirming check")
    assert rec.watch_id in rt.registry  # GetTask said `working`: the push's claim alone ends nothing


async def test_pushed_status_is_stored_before_the_answer(make_sdk_agent, workspace, server, runtime_for, clock) -> None:
    """A push answered 200 is in the database already: its status message on the task's row, its state as an event;
    a batch of pushes at once is all stored (none waits for a GetTask: the pushes said `working`)."""
    agent = make_sdk_agent(streaming=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    await ChatTarget.objects.acreate(id="chat1", name="Chat", workspace=str(workspace.root), backend="web")
    rt = await runtime_for(server.url, [workspace])
    tasks = [await start_task(rt.remote, workspace, "bot", f"hold s{i}") for i in range(5)]
    recs = [await add_record(workspace, t, "bot", clock) for t in tasks]
    for rec in recs:
        await rt.registry.arm(workspace, rec)
    await eventually(lambda: agent.methods.count("GetTask") >= len(recs), what="the first checks")
    await clock.until(lambda s: s.count(PUSH_SAFETY) >= len(recs))  # each check's news stored, its watch asleep
    tokens = {r.watch_id: r.push_token for r in pending.read(workspace).records}
    checks = agent.methods.count("GetTask")

    def body(task_id: str, state: str, text: str) -> dict:
        message = {"messageId": text, "role": "ROLE_AGENT", "parts": [{"text": text}]}
        return {"statusUpdate": {"taskId": task_id, "status": {"state": state, "message": message}}}

    async with httpx.AsyncClient(base_url=server.url) as http:

        async def push(rec: WatchRecord, state: str, text: str) -> int:
            headers = {"X-A2A-Notification-Token": tokens[rec.watch_id]}
            r = await http.post(f"/a2a/push/{rec.watch_id}", json=body(rec.task_id, state, text), headers=headers)
            return r.status_code

        answers = await asyncio.gather(*(push(r, "TASK_STATE_WORKING", f"step of {r.task_id}") for r in recs))
        assert set(answers) == {200}
        rows = {t.task_id: t.progress async for t in TaskRecord.objects.filter(task_id__in=[t.id for t in tasks])}
        assert rows == {t.id: f"step of {t.id}" for t in tasks}  # stored before the answers, no waiting here

        assert await push(recs[0], "TASK_STATE_SUBMITTED", "queued again") == 200
        states = [
            s async for s in TaskEvent.objects.filter(task_id=tasks[0].id, kind="state").values_list("state", flat=True)
        ]
        assert states[-1] == "submitted"
    assert agent.methods.count("GetTask") == checks


async def test_push_scale_out_checks_files_and_wakes_worker(make_agent, workspace, server, runtime_for, clock) -> None:
    from channels.layers import get_channel_layer

    agent = make_agent(streaming=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    await ChatTarget.objects.acreate(id="chat1", name="Chat", workspace=str(workspace.root), backend="web")
    rt = await runtime_for(server.url, None)  # a web process without the registry
    task = await start_task(rt.remote, workspace, "bot", "hold so")
    rec = await add_record(workspace, task, "bot", clock, source="push", push_token="s" * 43)
    url = f"{server.url}/a2a/push/{rec.watch_id}"
    layer = get_channel_layer()
    await layer.flush()  # wake-ups other tests sent to the worker channel (nobody read them)
    async with httpx.AsyncClient() as http:
        r = await http.post(url, json={"task": {"id": task.id}}, headers={"X-A2A-Notification-Token": "bad"})
        assert r.status_code == 404
        r = await http.post(url, json={"task": {"id": task.id}}, headers={"X-A2A-Notification-Token": "s" * 43})
        assert r.status_code == 200
    message = await layer.receive("a2a-watches")
    assert message == {"type": "watch.push", "workspace": str(workspace.root), "watch_id": rec.watch_id}
    agent.release("so")


async def test_push_endpoint_random_bodies_and_headers(make_agent, workspace, server, runtime_for, clock) -> None:
    agent = make_agent(streaming=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    await ChatTarget.objects.acreate(id="chat1", name="Chat", workspace=str(workspace.root), backend="web")
    rt = await runtime_for(server.url, [workspace])
    task = await start_task(rt.remote, workspace, "bot", "hold fz")
    rec = await add_record(workspace, task, "bot", clock)
    await rt.registry.arm(workspace, rec)
    await eventually(lambda: "GetTask" in agent.methods, what="the first check")
    token = pending.read(workspace).records[0].push_token or ""

    rng = random.Random(20261202)
    junk_json = [
        None, 1, "x", [], {}, {"task": None}, {"task": {"id": 5}}, {"task": {"id": task.id}},
        {"statusUpdate": {"taskId": task.id}}, {"artifactUpdate": {"taskId": "zzz"}}, {"statusUpdate": []},
        {"task": {"id": task.id, "status": {"state": "TASK_STATE_COMPLETED"}}}, [[[[[]]]]], {"a": "\u0000"},
    ]  # fmt: skip

    def body() -> bytes:
        kind = rng.randrange(5)
        if kind == 0:
            return rng.randbytes(rng.randrange(0, 300))
        if kind == 1:
            return json.dumps(rng.choice(junk_json)).encode()
        if kind == 2:
            return b"[" * rng.randrange(1, 5000)  # deep nesting
        if kind == 3:
            return ("{" + '"a":' * rng.randrange(1, 50)).encode()
        return json.dumps({"statusUpdate": {"taskId": rng.choice([task.id, "", "x" * 300])}}).encode()

    def headers() -> dict[str, str]:
        h: dict[str, str] = {}
        pick = rng.randrange(6)
        if pick == 0:
            h["X-A2A-Notification-Token"] = token
        elif pick == 1:
            h["Authorization"] = rng.choice([f"Bearer {token}", "Bearer", "Basic abc", f"bearer  {token}", ""])
        elif pick == 2:
            h["X-A2A-Notification-Token"] = token[: rng.randrange(len(token))] + "é"
        elif pick == 3:
            h["Content-Type"] = rng.choice(["text/plain", "application/json; charset=latin-1", "multipart/form-data"])
        return h

    statuses: list[int] = []
    async with httpx.AsyncClient(timeout=30) as http:
        for i in range(60):
            watch = rng.choice([rec.watch_id, "nope", "x" * 200, "%00", "..%2F.."])
            h = headers()
            try:
                r = await http.post(f"{server.url}/a2a/push/{watch}", content=body(), headers=h)
            except UnicodeEncodeError:
                continue  # httpx refuses non-ASCII header values itself; nothing reached the server
            statuses.append(r.status_code)
            assert r.status_code in (200, 400, 404, 413), (i, r.status_code, h)
        big = await http.post(
            f"{server.url}/a2a/push/{rec.watch_id}",
            content=b"{" + b" " * body_cap() + b"}",
            headers={"X-A2A-Notification-Token": token},
        )
        assert big.status_code == 413
        good = await http.post(
            f"{server.url}/a2a/push/{rec.watch_id}",
            json={"statusUpdate": {"taskId": task.id}},
            headers={"X-A2A-Notification-Token": token},
        )
        assert good.status_code == 200
    assert {400, 404} <= set(statuses)


async def test_push_without_its_token_is_refused_before_the_body(make_agent, workspace, runtime_for, clock) -> None:
    """What `manage.py serve` asks when a push's headers are in (a2aconsole.web.server), before its body."""
    agent = make_agent(streaming=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    await ChatTarget.objects.acreate(id="chat1", name="Chat", workspace=str(workspace.root), backend="web")
    rt = await runtime_for("http://127.0.0.1:9", [workspace])
    task = await start_task(rt.remote, workspace, "bot", "hold early")
    rec = await add_record(workspace, task, "bot", clock)
    await rt.registry.arm(workspace, rec)
    await eventually(lambda: "GetTask" in agent.methods, what="the first check")
    token = pending.read(workspace).records[0].push_token or ""
    assert token
    url = f"/a2a/push/{rec.watch_id}"
    assert not refused_before_body("POST", url, {"x-a2a-notification-token": token})
    assert not refused_before_body("POST", url, {"authorization": f"Bearer {token}"})
    assert refused_before_body("POST", url, {"x-a2a-notification-token": token[:-1]})
    assert refused_before_body("POST", url, {})
    assert refused_before_body("POST", "/a2a/push/unknown", {"x-a2a-notification-token": token})
    assert not refused_before_body("GET", url, {})  # Django answers it (405)
    assert not refused_before_body("POST", url + "/more", {})  # not the receiver's route
    assert not refused_before_body("POST", "/login/", {})
    agent.release("early")


async def test_scale_out_web_process_checks_pushes_after_the_body(runtime_for) -> None:
    await runtime_for(None, None)  # no registry in this process: only the files can tell
    assert not refused_before_body("POST", "/a2a/push/unknown", {})


async def test_a_push_is_not_handed_between_threads_by_the_middleware(runtime_for, monkeypatch) -> None:
    """A push needs no session, login or CSRF: it is served like the API (api/handler.py), its middleware hooks
    in the loop. Through the console's eleven, every push was handed to a thread and back some fifteen times:
    a fifth of the loop's time at 50 pushes a second."""
    await runtime_for("http://testserver", [])
    hops = count_thread_hops(monkeypatch)
    async with asgi_client() as client:
        r = await client.post("/a2a/push/no-such-watch", content=b"{}", headers={"X-A2A-Notification-Token": "t"})
    assert r.status_code == 404 and r.json() == {"error": "no such watch"}
    assert r.headers["X-Content-Type-Options"] == "nosniff" and "set-cookie" not in r.headers
    assert not [h for h in hops if "process_" in h] and len(hops) <= 3, hops


async def test_a_push_starts_no_thread(runtime_for, monkeypatch) -> None:
    """Django serves a request in a context whose first sync call starts a thread for that request alone, and the
    event loop waits for it to start: at 50 pushes a second, a fifth of the loop's time.

    Django logs each 4xx answer in the loop's default executor; that executor's one worker is started by the
    warm-up and kept (on a loaded machine a pool of more could start a second worker, when the next log came
    before the first worker went idle: that is the pool, not a thread per request)."""
    import asyncio
    import threading
    from concurrent.futures import ThreadPoolExecutor

    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=1))
    await runtime_for("http://testserver", [])
    async with asgi_client() as client:
        await client.post("/a2a/push/warm-up", content=b"{}", headers={"X-A2A-Notification-Token": "t"})
        started: list[str] = []
        real = threading.Thread.start
        monkeypatch.setattr(threading.Thread, "start", lambda self: started.append(self.name) or real(self))
        for _ in range(5):
            r = await client.post("/a2a/push/no-such-watch", content=b"{}", headers={"X-A2A-Notification-Token": "t"})
            assert r.status_code == 404
    assert started == []
