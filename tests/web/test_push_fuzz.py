"""The push receiver fuzzed with hypothesis over the real wire: arbitrary watch ids, tokens, headers, content
types, methods and bodies, to unknown watches and to a real armed watch with wrong tokens.

Whatever arrives: no answer >= 500, nothing accepted without the token, and a refused request changes nothing
(the workspace's files byte for byte, no new file, no extra check of the task)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2aconsole.asgi import application
from a2aconsole.core import pending
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.events import MemorySink
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.remote.values import StatusValue, TaskSnapshot
from a2aconsole.web.models import ChatTarget
from a2aconsole.web.process.runtime import build_runtime, close_runtime, install_runtime
from tests.support.watching import LoopbackServer, SignalClock, add_record, eventually, start_task

pytestmark = pytest.mark.django_db(transaction=True)

T = TypeVar("T")

# Header values h11 (the client's HTTP library) will put on the wire: any latin-1 text without NUL, CR, LF
# or surrounding blanks; the server sees each byte as one latin-1 character.
header_value = st.one_of(
    st.just(b""),
    st.text(st.characters(codec="latin-1", exclude_characters="\x00\t\n\x0b\x0c\r "), min_size=1, max_size=60).map(
        lambda s: s.encode("latin-1")
    ),
)


def legal(value: bytes) -> bool:
    """What h11 lets a header value be: no NUL, CR or LF, and no blank at either end."""
    return not any(c in value for c in b"\x00\r\n") and value == value.strip(b" \t")


json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
content_types = st.one_of(
    st.none(),
    st.sampled_from(
        [b"application/json", b"application/json; charset=latin-1", b"text/plain", b"multipart/form-data",
         b"application/x-www-form-urlencoded", b"application/a2a+json"]
    ),
    header_value,
)  # fmt: skip


def files_of(ws: Workspace) -> dict[str, bytes]:
    """Every file under the workspace, with its bytes."""
    return {str(p.relative_to(ws.root)): p.read_bytes() for p in sorted(ws.root.rglob("*")) if p.is_file()}


@pytest.fixture
async def server() -> AsyncIterator[LoopbackServer]:
    async with LoopbackServer(application) as s:
        yield s


async def fuzz_pushes(
    http: httpx.AsyncClient, url: str, watch_id: str, token: str, task_id: str, unchanged: Callable[[], None]
) -> None:
    """Send hypothesis's requests to `url/a2a/push/<id>` (from a worker thread, each on this loop, where the app
    runs), none with the right token; after each, `unchanged()` checks nothing happened."""
    loop = asyncio.get_running_loop()

    def on_loop(coro: Awaitable[T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, loop).result(30)  # type: ignore[arg-type]

    wrong_token = st.one_of(
        header_value,
        st.integers(0, len(token) - 1).map(lambda n: token[:n].encode()),  # a prefix
        st.text(min_size=1, max_size=3).map(lambda s: (token[:-1] + s).encode("utf-8")),
        st.just(token.upper().encode()),
    ).filter(lambda t: t != token.encode() and legal(t))
    bodies = st.one_of(
        st.binary(max_size=1500),
        json_value.map(lambda v: json.dumps(v).encode()),
        st.sampled_from(
            [{"task": {"id": task_id}}, {"statusUpdate": {"taskId": task_id}}, {"artifactUpdate": {}},
             {"task": {"id": task_id, "status": {"state": "TASK_STATE_COMPLETED"}}}]
        ).map(lambda v: json.dumps(v).encode()),
        st.integers(1, 20000).map(lambda n: b"[" * n),
    )  # fmt: skip

    @settings(
        max_examples=200,
        deadline=None,
        derandomize=True,  # the same examples on every run (CI), and no .hypothesis folder
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(
        watch=st.one_of(st.just(watch_id), st.text(max_size=80)),
        method=st.sampled_from(["POST", "POST", "POST", "PUT", "GET", "PATCH", "DELETE"]),
        token_header=st.one_of(st.none(), wrong_token),
        bearer=st.one_of(st.none(), wrong_token.map(lambda t: b"Bearer " + t).filter(legal), header_value),
        content_type=content_types,
        extra=st.dictionaries(st.sampled_from(["Accept", "X-Forwarded-For", "Origin", "Cookie"]), header_value),
        body=bodies,
    )
    def check(
        watch: str, method: str, token_header: Any, bearer: Any, content_type: Any, extra: Any, body: bytes
    ) -> None:
        headers: list[tuple[str, bytes]] = list(extra.items())
        if token_header is not None:
            headers.append(("X-A2A-Notification-Token", token_header))
        if bearer is not None:
            headers.append(("Authorization", bearer))
        if content_type is not None:
            headers.append(("Content-Type", content_type))
        r = on_loop(http.request(method, f"{url}/a2a/push/{quote(watch, safe='')}", headers=headers, content=body))
        assert r.status_code < 500, (r.status_code, r.text[:200])
        assert r.status_code != 200, "a push without the token was taken"
        unchanged()

    await asyncio.to_thread(check)


async def test_armed_watch_takes_nothing_without_its_token(make_agent, workspace, server) -> None:
    agent = make_agent(streaming=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    await ChatTarget.objects.acreate(id="chat1", name="Chat", workspace=str(workspace.root), backend="web")
    clock = SignalClock()
    rt = install_runtime(
        build_runtime(client_settings=ClientSettings(push_base_url=server.url), clock=clock, events=MemorySink())
    )
    try:
        await rt.start_registry([workspace])
        task = await start_task(rt.remote, workspace, "bot", "hold fuzz")
        rec = await add_record(workspace, task, "bot", clock)
        await rt.registry.arm(workspace, rec)
        await eventually(lambda: "GetTask" in agent.methods, what="the first check")
        await clock.until(lambda sleeps: len(sleeps) >= 1)  # the watch checked and now sleeps: it writes nothing
        token = pending.read(workspace).records[0].push_token or ""
        assert len(token) > 20
        before = files_of(workspace)
        checks = agent.methods.count("GetTask")

        def unchanged() -> None:
            assert files_of(workspace) == before  # pending.json byte for byte, no new file
            assert agent.methods.count("GetTask") == checks  # the watch was not woken
            assert rec.watch_id in rt.registry

        async with httpx.AsyncClient(timeout=30) as http:
            await fuzz_pushes(http, server.url, rec.watch_id, token, task.id, unchanged)
            good = await http.post(
                f"{server.url}/a2a/push/{rec.watch_id}",
                json={"statusUpdate": {"taskId": task.id}},
                headers={"X-A2A-Notification-Token": token},
            )
            assert good.status_code == 200  # the watch still takes its real push
    finally:
        agent.release("fuzz")
        await close_runtime()


async def test_scale_out_web_process_wakes_no_worker_without_the_token(workspace, server) -> None:
    from channels.layers import get_channel_layer

    await ChatTarget.objects.acreate(id="chat1", name="Chat", workspace=str(workspace.root), backend="web")
    install_runtime(build_runtime(client_settings=ClientSettings(push_base_url=server.url), events=MemorySink()))
    try:
        task = TaskSnapshot("task-1", "ctx-1", StatusValue("working"))
        rec = await add_record(workspace, task, "bot", SignalClock(), source="push", push_token="s" * 43)
        before = files_of(workspace)
        layer = get_channel_layer()
        await layer.flush()

        def unchanged() -> None:
            assert files_of(workspace) == before

        async with httpx.AsyncClient(timeout=30) as http:
            await fuzz_pushes(http, server.url, rec.watch_id, "s" * 43, task.id, unchanged)
            await layer.send("a2a-watches", {"type": "test.sentinel"})
            assert await layer.receive("a2a-watches") == {"type": "test.sentinel"}  # no wake-up was sent before it
            good = await http.post(
                f"{server.url}/a2a/push/{rec.watch_id}",
                json={"task": {"id": task.id}},
                headers={"Authorization": "Bearer " + "s" * 43},
            )
            assert good.status_code == 200  # the files were found: the refusals above were about the token
        assert (await layer.receive("a2a-watches"))["watch_id"] == rec.watch_id
    finally:
        await close_runtime()
