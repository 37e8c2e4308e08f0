"""A task the agent no longer knows ends its watch "lost", with one notice; a passing failure never does.

Against real agents on both SDKs (an agent that forgets its tasks, as one restarted with an in-memory store
does), and against a real agent process of each SDK killed and started again on the same port."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from a2aconsole.core import pending
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.remote.client import Remote
from tests.support.agent_process import agent_process
from tests.support.js_agents import JsAgentHost, SdkAgent
from tests.support.watching import LoopbackServer, add_record, eventually, start_task

LOST_NOTICE = re.compile(
    r'^\[A2A: "bot" no longer knows task (?P<short>\S{4})… \(it may have restarted\); '
    r"last state (?P<last>.+) at \d\d:\d\d\]$"
)


def use(ws: Workspace, url: str) -> None:
    ws.save_agents([{"name": "bot", "url": url}], None)


async def said_at_agent(remote: Remote, ws: Workspace, task_id: str, text: str) -> None:
    """Wait until the agent's task says `text` (its status message): the agent works in its own thread."""
    entry = ws.read_agents().get("bot")
    assert entry is not None
    conn = await remote.connect(entry)

    async def says() -> bool:
        status = (await conn.get_task(task_id)).status
        return status.message is not None and text in "".join(p.text for p in status.message.parts)

    await eventually(says, what=f"the task to say {text!r}")


async def _five_hundred(scope: Any, receive: Any, send: Any) -> None:
    """Every request answered HTTP 500: an agent's server in trouble."""
    await send({"type": "http.response.start", "status": 500, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"internal error"})


async def test_a_task_the_agent_forgot_ends_the_watch_lost(
    make_sdk_agent, workspace: Workspace, remote: Remote, clock, registry_for
) -> None:
    agent: SdkAgent = make_sdk_agent(streaming=False, push=False)
    use(workspace, agent.url)
    reg, delivery, sink = registry_for(workspace)
    task = await start_task(remote, workspace, "bot", "steps 3 go end")
    agent.release("go")
    await said_at_agent(remote, workspace, task.id, "working 3/3")
    rec = await add_record(workspace, task, "bot", clock)
    await reg.arm(workspace, rec)
    await clock.until(lambda s: len(s) == 1)
    await clock.advance(15)  # the first check: still working, at 3/3
    await clock.until(lambda s: len(s) == 2)
    assert reg.snapshot()[0]["state"] == "working"

    agent.forget()  # the agent restarted with an in-memory store
    await clock.advance(30)
    [(target, text)] = await delivery.wait_for(1)
    assert target == "chat1"
    m = LOST_NOTICE.match(text)
    assert m is not None, text
    assert m["short"] == task.id[:4] and m["last"] == "working 3/3"
    ended = [e for e in sink.events if e.kind == "watch.ended"]
    assert [(e.state, e.data["reason"]) for e in ended] == [("lost", "lost")]
    assert "result" not in sink.kinds()  # a notice, not a result
    assert pending.read(workspace).records == [] and len(reg) == 0
    agent.release("end")


async def test_passing_failures_are_not_lost(
    make_sdk_agent, workspace: Workspace, remote: Remote, clock, registry_for
) -> None:
    """Connection refused and HTTP 500 are retried on the backoff; the watch ends only with the task's result."""
    agent: SdkAgent = make_sdk_agent(streaming=False, push=False)
    use(workspace, agent.url)
    reg, delivery, sink = registry_for(workspace)
    task = await start_task(remote, workspace, "bot", "hold pass")
    rec = await add_record(workspace, task, "bot", clock)
    await reg.arm(workspace, rec)
    await clock.until(lambda s: len(s) == 1)

    use(workspace, "http://127.0.0.1:9/")  # nothing listens there: connection refused
    await clock.advance(15)
    await clock.until(lambda s: len(s) == 2)
    assert "unreachable" in reg.snapshot()[0]["lastError"]
    async with LoopbackServer(_five_hundred) as broken:
        use(workspace, broken.url + "/")
        await clock.advance(30)
        await clock.until(lambda s: len(s) == 3)
        assert "500" in reg.snapshot()[0]["lastError"]
    assert len(reg) == 1 and "watch.ended" not in sink.kinds() and delivery.delivered == []

    use(workspace, agent.url)
    agent.release("pass")
    await eventually(lambda: task.id in agent.finished, what="the agent to finish")
    await clock.advance(60)
    [(_, text)] = await delivery.wait_for(1)
    assert "(completed)]" in text and "released pass" in text


@contextmanager
def js_agent_process(log: Path, port: int = 0, **options: Any) -> Iterator[str]:
    """A JS agent in a node process of its own, on `port` (else any free one); yields its URL, the same on each
    start on one port (its id is fixed); the process ends on leaving."""
    host = JsAgentHost(log, port=port)
    try:
        yield host.make(agent_id="restarted", **options).url
    finally:
        host.stop()


@pytest.mark.parametrize("sdk", ["python", "js"])
async def test_an_agent_process_restarted_on_its_port_has_lost_the_task(
    sdk: str, workspace: Workspace, remote: Remote, clock, registry_for, tmp_path: Path
) -> None:
    """The issue's case end to end: a real agent process is killed while the watch follows its task (the watch
    goes on through the refused connections), then started again on the same port, knowing no task: lost."""

    def process(port: int = 0) -> Any:
        if sdk == "js":
            return js_agent_process(tmp_path / f"agent-{port}.log", port, streaming=False, push=False)
        return agent_process(streaming=False, push=False, **({"port": port} if port else {}))

    reg, delivery, sink = registry_for(workspace)
    with process() as url:
        use(workspace, url)
        task = await start_task(remote, workspace, "bot", "hold restart")
        rec = await add_record(workspace, task, "bot", clock)
        await reg.arm(workspace, rec)
        await clock.until(lambda s: len(s) == 1)
        await clock.advance(15)
        await clock.until(lambda s: len(s) == 2)
        assert reg.snapshot()[0]["state"] == "working" and reg.snapshot()[0]["lastError"] == ""
    port = int(url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])

    await clock.advance(30)  # the agent is down: a passing failure
    await clock.until(lambda s: len(s) == 3)
    assert "unreachable" in reg.snapshot()[0]["lastError"] and len(reg) == 1

    with process(port) as again:
        assert again == url
        await clock.advance(60)
        [(_, text)] = await delivery.wait_for(1)
    m = LOST_NOTICE.match(text)
    assert m is not None, text
    assert m["last"] == "working holding restart"
    assert [e.data["reason"] for e in sink.events if e.kind == "watch.ended"] == ["lost"]
    assert pending.read(workspace).records == []
