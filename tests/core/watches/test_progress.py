"""Progress seen on a stream (a status message, an artifact update) is a `progress` event, whether the send's
wait or a watch follows the task, on both SDKs."""

from __future__ import annotations

import asyncio

from a2a.types import (
    Artifact,
    Message,
    Part,
    Role,
    StreamResponse,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

from a2aconsole.core.config import ClientSettings
from a2aconsole.core.events import PROGRESS
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.remote.convert import event_value
from a2aconsole.core.remote.http import new_http_client
from a2aconsole.core.watches.follower import progress_of
from a2aconsole.core.watches.registry import WatchRegistry
from tests.support.clock import FakeClock
from tests.support.js_agents import SdkAgent
from tests.support.toolkit import TARGET, entry, make_tool, write_agents
from tests.support.watching import SignalClock, WaitableDelivery, WaitableSink, add_record, eventually, start_task


def progress(sink: WaitableSink) -> list[tuple[str, str, str]]:
    return [(e.data["kind"], e.text, e.data.get("name", "")) for e in sink.events if e.kind == PROGRESS]


async def test_send_wait_reports_progress_from_the_stream(http, workspace: Workspace, sdk_agent: SdkAgent) -> None:
    write_agents(workspace, entry("bot", sdk_agent))
    sink = WaitableSink()
    tool = make_tool(http, workspace, clock=FakeClock(), events=sink)  # the wait never runs out
    send = asyncio.ensure_future(tool.run("send", {"agent": "bot", "message": "hold pr1"}, TARGET))
    await eventually(lambda: "SubscribeToTask" in sdk_agent.methods, timeout=20)
    sdk_agent.release("pr1")
    result = await asyncio.wait_for(send, 20)
    assert result["state"] == "completed" and "released pr1" in result["text"]
    assert ("artifact", "released pr1", "result") in progress(sink)
    assert all(e.task_id == result["taskId"] and e.target == TARGET for e in sink.events if e.kind == PROGRESS)


async def test_watch_reports_progress_from_the_stream(workspace: Workspace, make_sdk_agent) -> None:
    agent = make_sdk_agent(push=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    http = new_http_client()
    remote = Remote(http, call_timeout=10.0, card_timeout=5.0)
    clock, sink = SignalClock(), WaitableSink()
    delivery = WaitableDelivery({"chat1": workspace})
    registry = WatchRegistry(remote, ClientSettings(), delivery, clock, sink)
    try:
        task = await start_task(remote, workspace, "bot", "hold pr2")
        await registry.arm(workspace, await add_record(workspace, task, "bot", clock, source="subscribe"))
        await eventually(lambda: "SubscribeToTask" in agent.methods, timeout=20)
        agent.release("pr2")
        await delivery.wait_for(1)
    finally:
        agent.release("pr2")
        await registry.stop()
        await http.aclose()
    assert ("artifact", "released pr2", "result") in progress(sink)
    assert all(e.task_id == task.id and e.target == "chat1" for e in sink.events if e.kind == PROGRESS)


def test_an_artifact_in_chunks_is_told_at_its_start_and_its_end() -> None:
    def chunk(text: str, *, append: bool, last: bool) -> StreamResponse:
        art = Artifact(artifact_id="a1", name="report", parts=[Part(text=text)])
        return StreamResponse(
            artifact_update=TaskArtifactUpdateEvent(
                task_id="t", context_id="c", artifact=art, append=append, last_chunk=last
            )
        )

    told = [progress_of(event_value(chunk(f"part {i}", append=i > 0, last=i == 99))) for i in range(100)]
    kept = [(text, data["append"], data["lastChunk"]) for text, data in filter(None, told)]
    assert kept == [("part 0", False, False), ("part 99", True, True)]
    status = StreamResponse(
        status_update=TaskStatusUpdateEvent(
            task_id="t",
            context_id="c",
            status=TaskStatus(
                state=TaskState.TASK_STATE_WORKING,
                message=Message(message_id="m", role=Role.ROLE_AGENT, parts=[Part(text="x" * 5000)]),
            ),
        )
    )
    text, data = progress_of(event_value(status))
    assert data == {"kind": "status", "state": "working"} and text.startswith("x" * 1024) and len(text) < 1100


async def test_a_watch_tells_a_new_status_message_seen_by_get_task_once(workspace: Workspace, make_sdk_agent) -> None:
    """Bug 9: a push (or a poll) that finds only a new status message changes no state: it was never told."""
    agent = make_sdk_agent(push=False, streaming=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    http = new_http_client()
    remote = Remote(http, call_timeout=10.0, card_timeout=5.0)
    clock, sink = SignalClock(), WaitableSink()
    delivery = WaitableDelivery({"chat1": workspace})
    registry = WatchRegistry(remote, ClientSettings(), delivery, clock, sink)
    try:
        task = await start_task(remote, workspace, "bot", "steps 3 st1 st1end")
        agent.release("st1")
        conn = await remote.connect(workspace.read_agents().get("bot"))

        async def at_last_step() -> bool:
            t = await conn.get_task(task.id)
            return t.status.message is not None and t.status.message.parts[0].text == "working 3/3"

        await eventually(at_last_step, what="the agent's last step")  # the agent's own pace (real time)
        await registry.arm(workspace, await add_record(workspace, task, "bot", clock, source="poll"))
        await clock.until(lambda s: s == [15.0])
        await clock.advance(15)
        await sink.until(lambda: ("status", "working 3/3", "") in progress(sink), what="the status message")
        await clock.until(lambda s: s[-1:] == [30.0])
        await clock.advance(30)  # checked again: the same message is not told twice
        await clock.until(lambda s: s[-1:] == [60.0])
        assert progress(sink) == [("status", "working 3/3", "")]
        agent.release("st1end")
        await eventually(lambda: task.id in agent.finished, what="the agent to finish")
        await clock.advance(60)
        await delivery.wait_for(1)
    finally:
        agent.release("st1")
        agent.release("st1end")
        await registry.stop()
        await http.aclose()
    assert [e.data for e in sink.events if e.kind == PROGRESS] == [{"kind": "status", "state": "working"}]
