"""An agent on `fasta2a` (pydantic's A2A server, tests/support/fasta2a_agents.py) with its stock storage: send, a
file, a failure, status, a watch. Its storage writes timestamps without a time zone, which the SDK's strict parse
refuses (issue 26, item 1): the answers are read leniently, and say nothing different for it. It also takes every
message as a new task, a follow-up's `taskId` ignored (item 2): the answer says so, the old task's question is
answered, and the new task is the one followed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from a2aconsole.core import pending
from a2aconsole.core.events import QUESTION, SENT, MemorySink
from a2aconsole.core.files.workspace import Workspace
from tests.support.agents import PDF_BYTES
from tests.support.clock import FakeClock
from tests.support.fasta2a_agents import Fasta2aAgent
from tests.support.toolkit import TARGET, TargetTool, entry, make_tool, write_agents
from tests.support.watching import eventually


@pytest.fixture
def pydantic_agent(workspace: Workspace, fasta2a_agent: Fasta2aAgent) -> Fasta2aAgent:
    write_agents(workspace, entry("fa", fasta2a_agent))
    return fasta2a_agent


async def test_fasta2a_agent_listed(http, workspace: Workspace, pydantic_agent: Fasta2aAgent) -> None:
    (info,) = (await make_tool(http, workspace).run("agents", {}, TARGET))["agents"]
    assert info["cardName"] == "fasta2a test agent" and info["protocolVersions"] == ["1.0"]
    assert (info["streaming"], info["push"]) == (True, False)


async def test_fasta2a_send_echo_file_fail_and_status(http, workspace: Workspace, pydantic_agent: Fasta2aAgent) -> None:
    tool = make_tool(http, workspace)
    done = await tool.run("send", {"agent": "fa", "message": "hello there"}, TARGET)
    assert done.get("state") == "completed" and done["text"] == "echo: hello there", done
    assert pydantic_agent.received[0].text == "hello there"
    status = await tool.run("status", {"agent": "fa", "taskId": done["taskId"]}, TARGET)
    assert status["state"] == "completed" and status["text"] == "echo: hello there", status
    report = await tool.run("send", {"agent": "fa", "message": "file"}, TARGET)
    assert report["state"] == "completed" and report["text"] == "here is the report", report
    assert (workspace.root / report["files"][0]).read_bytes() == PDF_BYTES
    failed = await tool.run("send", {"agent": "fa", "message": "fail"}, TARGET)
    assert failed["state"] == "failed" and failed["text"] == "boom: cannot do that", failed
    assert pending.read(workspace).records == []


async def test_fasta2a_send_follows_the_stream_to_the_end(
    http, workspace: Workspace, pydantic_agent: Fasta2aAgent
) -> None:
    """fasta2a answers a send with the task submitted (always): the send follows its stream (no push on fasta2a)
    and answers with the result when it comes within the wait."""
    clock = FakeClock()
    tool = make_tool(http, workspace, clock=clock)
    run = asyncio.create_task(tool.run("send", {"agent": "fa", "message": "steps 2 g1 g2"}, TARGET))
    await clock.wait_for_sleepers(1)
    pydantic_agent.release("g1")
    pydantic_agent.release("g2")
    done = await asyncio.wait_for(run, 10)
    assert done.get("state") == "completed" and done["text"] == "2 steps done", done
    assert pending.read(workspace).records == []


async def _past_the_wait(tool: TargetTool, clock: FakeClock, args: dict[str, Any]) -> dict[str, Any]:
    """A send whose task outlives the wait (the fake clock run past `wait_seconds`): its answer."""
    run = asyncio.create_task(tool.run("send", args, TARGET))
    await clock.wait_for_sleepers(1)
    await clock.advance(5)
    return await asyncio.wait_for(run, 10)


async def test_fasta2a_task_outliving_the_wait_is_watched(
    http, workspace: Workspace, pydantic_agent: Fasta2aAgent
) -> None:
    clock = FakeClock()
    sent = await _past_the_wait(make_tool(http, workspace, clock=clock), clock, {"agent": "fa", "message": "hold g1"})
    assert sent.get("state") == "working", sent
    (record,) = pending.read(workspace).records
    assert record.source == "subscribe" and record.task_id == sent["taskId"]


def _moved(new: str, old: str) -> str:
    return f"the agent started a new task {new} instead of continuing {old}"


async def _asked(tool: TargetTool, answer: str) -> tuple[str, dict[str, Any]]:
    """The task of a question ("ask"), and the send that answers it with `answer` (its taskId and contextId)."""
    asked = await tool.run("send", {"agent": "fa", "message": "ask"}, TARGET)
    assert asked.get("state") == "input-required" and asked["question"] == "Which colour?", asked
    return asked["taskId"], {
        "agent": "fa",
        "message": answer,
        "taskId": asked["taskId"],
        "contextId": asked["contextId"],
    }


async def test_a_follow_up_the_agent_takes_as_a_new_task_says_so(
    http, workspace: Workspace, pydantic_agent: Fasta2aAgent
) -> None:
    sink = MemorySink()
    tool = make_tool(http, workspace, events=sink)
    old, follow_up = await _asked(tool, "red")
    answer = await tool.run("send", follow_up, TARGET)
    new = answer["taskId"]
    assert answer.get("state") == "completed" and answer["text"] == "got answer: red" and new != old, answer
    assert answer["newTask"] == _moved(new, old) and answer["previousTaskId"] == old
    # the old task's question is answered: its history has the answer sent (a settling event), naming the new task
    (question,) = [e for e in sink.events if e.kind == QUESTION]
    assert question.task_id == old
    sent_old = [e for e in sink.events if e.kind == SENT and e.task_id == old]
    assert [e.text for e in sent_old] == ["ask", "red"]
    assert sent_old[-1].data["newTaskId"] == new and sent_old[-1].data["note"] == _moved(new, old)
    assert [e.text for e in sink.events if e.kind == SENT and e.task_id == new] == ["red"]


async def test_the_new_task_of_a_follow_up_is_the_one_watched(
    http, workspace: Workspace, pydantic_agent: Fasta2aAgent
) -> None:
    clock = FakeClock()
    tool = make_tool(http, workspace, clock=clock)
    old, follow_up = await _asked(tool, "hold g5")
    answer = await _past_the_wait(tool, clock, follow_up)
    new = answer["taskId"]
    assert answer.get("state") == "working" and new != old and answer["newTask"] == _moved(new, old), answer
    (record,) = pending.read(workspace).records
    assert record.task_id == new


async def test_fasta2a_cancel_is_answered_before_it_takes_effect(
    http, workspace: Workspace, pydantic_agent: Fasta2aAgent
) -> None:
    """fasta2a answers CancelTask with the task as it is when the cancel is queued for its worker (still working):
    a cancel only requested, the watch goes on; the task is canceled soon after."""
    clock = FakeClock()
    tool = make_tool(http, workspace, clock=clock)
    sent = await _past_the_wait(tool, clock, {"agent": "fa", "message": "hold g9"})
    out = await tool.run("cancel", {"agent": "fa", "taskId": sent["taskId"]}, TARGET)
    assert out.get("state") == "working" and out["watch"] == "goes on", out
    assert [r.task_id for r in pending.read(workspace).records] == [sent["taskId"]]

    async def canceled() -> bool:
        return (await tool.run("status", {"agent": "fa", "taskId": sent["taskId"]}, TARGET)).get("state") == "canceled"

    await eventually(canceled)
    assert pending.read(workspace).records == []  # the settled status ended the watch


async def test_a_follow_up_without_its_context_is_told_to_send_it(
    http, workspace: Workspace, pydantic_agent: Fasta2aAgent
) -> None:
    """Without the contextId, fasta2a's new task is in a new context too: the agent lost the conversation (this
    one echoes, as it got no question to answer), and the answer says what to send to keep it."""
    tool = make_tool(http, workspace)
    old, follow_up = await _asked(tool, "red")
    del follow_up["contextId"]
    answer = await tool.run("send", follow_up, TARGET)
    assert answer.get("state") == "completed" and answer["text"] == "echo: red", answer
    assert answer["newTask"] == (
        f"{_moved(answer['taskId'], old)}; this send named no contextId, and the agent may have lost the "
        "conversation: to keep it, send the task's contextId with the answer"
    )
