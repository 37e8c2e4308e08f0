"""Agents speaking protocol 0.3 (a 1.3 server with a legacy card and the 0.3 JSON-RPC methods)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from a2aconsole.core import pending
from a2aconsole.core.files.workspace import Workspace
from tests.support.agents import PDF_BYTES, TestAgent
from tests.support.clock import FakeClock
from tests.support.toolkit import TARGET, entry, make_tool, write_agents


@pytest.fixture
def legacy(workspace: Workspace, make_agent: Callable[..., TestAgent]) -> TestAgent:
    agent = make_agent(legacy=True, key="legacy-key-7")
    write_agents(workspace, entry("old", agent, key="legacy-key-7"))
    return agent


async def test_legacy_agent_listed(http, workspace: Workspace, legacy: TestAgent) -> None:
    (info,) = (await make_tool(http, workspace).run("agents", {}, TARGET))["agents"]
    assert info["protocolVersions"] == ["0.3.0"]
    assert [s["id"] for s in info["skills"]] == ["echo", "files"]


async def test_legacy_agent_send_question_answer_file_and_hops(http, workspace: Workspace, legacy: TestAgent) -> None:
    tool = make_tool(http, workspace, hops=1)
    (workspace.root / "a.txt").write_text("attached", encoding="utf-8")
    done = await tool.run("send", {"agent": "old", "message": "hello old", "files": ["a.txt"]}, TARGET)
    assert done["state"] == "completed" and done["text"] == "echo: hello old"
    assert legacy.received[0].metadata["volcanic.hops"] == 2
    assert legacy.received[0].parts[1]["filename"] == "a.txt"
    question = await tool.run("send", {"agent": "old", "message": "ask"}, TARGET)
    assert question["state"] == "input-required" and question["question"] == "Which colour?"
    answer = await tool.run("send", {"agent": "old", "message": "red", "taskId": question["taskId"]}, TARGET)
    assert answer["state"] == "completed" and answer["text"] == "got answer: red"
    report = await tool.run("send", {"agent": "old", "message": "file"}, TARGET)
    assert (workspace.root / report["files"][0]).read_bytes() == PDF_BYTES


async def test_legacy_agent_watch_and_cancel(http, workspace: Workspace, legacy: TestAgent) -> None:
    clock = FakeClock()
    tool = make_tool(http, workspace, clock=clock)
    run = asyncio.create_task(tool.run("send", {"agent": "old", "message": "hold g7"}, TARGET))
    await clock.wait_for_sleepers(1)
    await clock.advance(5)
    sent = await asyncio.wait_for(run, 10)
    assert sent["state"] == "working"
    assert pending.read(workspace).records[0].source == "subscribe"
    canceled = await tool.run("cancel", {"agent": "old", "taskId": sent["taskId"]}, TARGET)
    assert canceled["state"] == "canceled"
    assert pending.read(workspace).records == []
