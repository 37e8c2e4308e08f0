"""Answers that are too big are refused while they are read, within a byte budget: a whole response body, or
one event of a stream (a subscription lives for minutes, so the budget is per event). Real loopback agents;
the 100 MB one runs in its own process, so only the console side's memory is measured."""

from __future__ import annotations

import contextlib
import gc
import weakref
from collections.abc import AsyncIterator

import httpx
import pytest

from a2aconsole.core import pending
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.remote.answer_budget import AnswerTooLarge, BoundedStream
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.remote.errors import RemoteError
from a2aconsole.core.remote.http import new_http_client
from a2aconsole.core.remote.values import ArtifactUpdate, StatusUpdate, TaskSnapshot
from a2aconsole.core.watches.registry import WatchRegistry
from tests.support.agent_process import agent_process
from tests.support.agents import TestAgent
from tests.support.js_agents import JsAgent
from tests.support.memory import reset_peak, status_kb
from tests.support.toolkit import SETTINGS, TARGET, entry, make_tool, write_agents
from tests.support.watching import (
    SignalClock,
    WaitableDelivery,
    WaitableSink,
    add_record,
    eventually,
    settled_at_agent,
    start_task,
)

MB = 1024 * 1024


@contextlib.asynccontextmanager
async def _client(limit: int | None = None) -> AsyncIterator[httpx.AsyncClient]:
    client = new_http_client(limit)
    try:
        yield client
    finally:
        await client.aclose()


@pytest.mark.timeout(180)
async def test_a_100_mb_answer_is_refused_and_costs_little_memory(workspace: Workspace) -> None:
    # chunked: no Content-Length to refuse at once, so the budget is counted while the body streams in
    with agent_process(chunked=True) as url:
        write_agents(workspace, entry("big", url))
        async with _client(SETTINGS.response_limit) as http:
            tool = make_tool(http, workspace, wait_seconds=60)  # the agent takes its time to build 100 MB
            warm = await tool.run("send", {"agent": "big", "message": "hello"}, TARGET)
            assert warm["state"] == "completed"
            reset_peak()
            before = status_kb("VmRSS")
            out = await tool.run("send", {"agent": "big", "message": "bigtext 100000000"}, TARGET)
            grown_mb = (status_kb("VmHWM") - before) / 1024
    assert out.keys() == {"error"}, out
    assert out["error"].startswith('agent "big" answered more than 14 MB to ')
    assert "nothing of it was kept" in out["error"] and "A2AClient__MaxResponseBytes" in out["error"]
    assert grown_mb < 50, f"RSS grew by {grown_mb:.1f} MB"
    assert not workspace.inbox_dir.exists()  # nothing stored
    assert pending.read(workspace).records == []  # and no watch reads it again and again


async def test_a_declared_length_over_the_budget_is_refused_before_reading(workspace: Workspace, make_agent) -> None:
    agent: TestAgent = make_agent(streaming=False)
    write_agents(workspace, entry("bot", agent))
    async with _client(64 * 1024) as http:
        tool = make_tool(http, workspace)
        small = await tool.run("send", {"agent": "bot", "message": "bigtext 30000"}, TARGET)
        big = await tool.run("send", {"agent": "bot", "message": "bigtext 100000"}, TARGET)
    assert small["state"] == "completed" and "line 1 of a long text" in small["text"]
    assert big == {"error": big["error"]} and big["error"].startswith('agent "bot" answered more than 0.06 MB to ')


EVENT_KINDS = {TaskSnapshot: "task", StatusUpdate: "status_update", ArtifactUpdate: "artifact_update"}


async def _subscribe(http: httpx.AsyncClient, workspace: Workspace, agent: TestAgent, chunks: str) -> list[str]:
    """Start `chunks <n> <chars> <gate>` (returnImmediately), subscribe to it, open the gate once the stream is
    up; the kinds of the events read until the task completed."""
    remote = Remote(http, call_timeout=10, card_timeout=5)
    task = await start_task(remote, workspace, "bot", chunks)
    conn = await remote.connect(workspace.read_agents().get("bot"))
    seen: list[str] = []
    async with contextlib.aclosing(conn.subscribe(task.id)) as stream:
        async for ev in stream:
            seen.append(kind := EVENT_KINDS[type(ev)])
            if kind == "task":
                agent.release(chunks.rsplit(" ", 1)[1])
            if isinstance(ev, StatusUpdate) and ev.status.state == "completed":
                break
    return seen


async def test_the_stream_budget_is_per_event(workspace: Workspace, make_agent) -> None:
    """Five 40 KB artifact events pass a 64 KB budget (200 KB in all); one 100 KB event does not."""
    agent: TestAgent = make_agent()
    write_agents(workspace, entry("bot", agent))
    async with _client(64 * 1024) as http:
        seen = await _subscribe(http, workspace, agent, "chunks 5 40000 g1")
        assert seen.count("artifact_update") == 5 and seen[-1] == "status_update"
        with pytest.raises(RemoteError) as e:
            await _subscribe(http, workspace, agent, "chunks 1 100000 g2")
    assert e.value.kind == "too_big"
    assert str(e.value).startswith('agent "bot" answered more than 0.06 MB to subscribe')


class _Chunks(httpx.AsyncByteStream):
    def __init__(self, *chunks: bytes) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for c in self.chunks:
            yield c


@pytest.mark.parametrize(
    ("chunks", "per_event", "over"),
    [
        ((b"x" * 60, b"x" * 60), False, True),  # a body: every byte counts
        ((b"data: " + b"x" * 50 + b"\n\n", b"data: " + b"x" * 50 + b"\n\n"), True, False),  # two events of 58
        ((b"data: " + b"x" * 50 + b"\r", b"\n\r\n", b"data: " + b"y" * 50 + b"\r\n\r\n"), True, False),  # split ends
        ((b"data: " + b"x" * 50, b"x" * 50 + b"\n\n"), True, True),  # one event of 108, in two chunks
    ],
)
async def test_bounded_stream_counts_bodies_whole_and_events_apart(
    chunks: tuple[bytes, ...], per_event: bool, over: bool
) -> None:
    read = []
    with pytest.raises(AnswerTooLarge) if over else contextlib.nullcontext():
        async for c in BoundedStream(_Chunks(*chunks), 100, per_event):
            read.append(c)
    assert (b"".join(read) == b"".join(chunks)) is not over


async def test_a_read_answer_is_freed_at_once(workspace: Workspace, sdk_agent: TestAgent | JsAgent) -> None:
    """httpx's response and its body stream refer to each other; the budget's stream lets go of the body once it
    is closed, so each response of a send (the card, the send, the GetTask) is freed when it was read, not at the
    garbage collector's next pass (which took ~0.25 ms every few sends, with ~100 objects a call)."""
    write_agents(workspace, entry("bot", sdk_agent))
    read: list[weakref.ref[httpx.Response]] = []

    async def note(response: httpx.Response) -> None:
        read.append(weakref.ref(response))

    async with _client() as http:
        http.event_hooks["response"].append(note)
        tool = make_tool(http, workspace)
        gc.disable()  # a response held by a cycle stays until the collector runs
        try:
            out = await tool.run("send", {"agent": "bot", "message": "hello"}, TARGET)
            left = [r() for r in read if r() is not None]
        finally:
            gc.enable()
    assert out["state"] == "completed", out
    assert len(read) >= 3, read  # the card, the send, at least one GetTask
    assert left == []


async def test_a_closed_answer_reads_no_further() -> None:
    stream = BoundedStream(_Chunks(b"abc"), 100, False)
    await stream.aclose()
    with pytest.raises(httpx.StreamClosed):
        async for _ in stream:
            pass


async def test_a_watch_whose_task_grew_too_big_ends_and_says_why(workspace: Workspace, make_agent) -> None:
    """Every later check would read the same oversized answer: the watch ends at once with the reason."""
    agent: TestAgent = make_agent(streaming=False, push=False)
    write_agents(workspace, entry("bot", agent))
    clock = SignalClock()
    delivery = WaitableDelivery({"chat1": workspace})
    async with _client(64 * 1024) as http:
        remote = Remote(http, call_timeout=10, card_timeout=5)
        registry = WatchRegistry(remote, ClientSettings(), delivery, clock, WaitableSink())
        try:
            task = await start_task(remote, workspace, "bot", "bigtext 100000 big")
            record = await add_record(workspace, task, "bot", clock, source="poll")
            await registry.arm(workspace, record)
            agent.release("big")
            async with _client() as roomy:  # the test's own look: has the agent finished?
                conn = await Remote(roomy).connect(workspace.read_agents().get("bot"))
                await settled_at_agent(conn, task.id, "completed")
            registry.wake(record.watch_id)
            [(target, text)] = await delivery.wait_for(1)
            await eventually(lambda: pending.read(workspace).records == [], what="the watch to leave the file")
        finally:
            await registry.stop()
    assert target == "chat1"
    assert text.startswith('[A2A watch ended] agent "bot" answered more than 0.06 MB to status')
    assert text.endswith(f"task {task.id} is no longer watched")
    assert not workspace.inbox_dir.exists()


async def test_1200_file_parts_of_one_name_are_1200_files(workspace: Workspace, agent: TestAgent) -> None:
    """Each part tries one name (`part.txt`, `part-1.txt`, …), not every taken one again (that was quadratic)."""
    write_agents(workspace, entry("bot", agent))
    async with _client() as http:
        out = await make_tool(http, workspace).run("send", {"agent": "bot", "message": "manyfiles 1200"}, TARGET)
    assert out["state"] == "completed" and out["text"] == "1200 files attached"
    assert len(out["files"]) == len(set(out["files"])) == 1200
    folder = workspace.inbox_dir / "bot"
    assert sorted(p.name for p in folder.iterdir()) == sorted(["part.txt"] + [f"part-{i}.txt" for i in range(1, 1200)])
    assert (folder / "part-1199.txt").read_text() == "file 1199\n"


async def test_a_compressed_answer_is_refused(workspace: Workspace, make_agent) -> None:
    """We ask for no compression: a gzipped answer's real size is unknown until inflated (a 100 KB zip bomb
    inflates to 100 MB), so it is refused before it is read."""
    agent: TestAgent = make_agent(gzip_calls=True, streaming=False)
    write_agents(workspace, entry("bot", agent))
    async with _client() as http:
        out = await make_tool(http, workspace).run("send", {"agent": "bot", "message": "hello"}, TARGET)
    assert out == {
        "error": 'agent "bot" answered send compressed (gzip) though asked for no compression; its answer was not read'
    }
    assert agent.requests[-1][2]["accept-encoding"] == "identity"
