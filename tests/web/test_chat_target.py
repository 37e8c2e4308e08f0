"""A chat target is resolved once by its caller and passed to the tool as a value: the tool reads no database.

The workspace and the inbound hops come with the value (`core.chat.ChatTarget`), read afresh by each caller
(`web.chats`), so there is no hop cache to go stale and no blocking database read from inside the event loop.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from a2aconsole.core.chat import CONSOLE_TARGET
from a2aconsole.core.chat import ChatTarget as Chat
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.tool.tool import A2ATool
from a2aconsole.core.watches.delivery import ResultDelivery
from a2aconsole.web import scope
from a2aconsole.web.chats import aresolve, resolve
from a2aconsole.web.models import ChatTarget
from a2aconsole.web.process.runtime import Runtime
from tests.support.agents import TestAgent
from tests.support.runtime import fresh_runtime
from tests.support.watching import WaitableSink

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
async def runtime() -> AsyncIterator[Runtime]:
    async with fresh_runtime(client_settings=ClientSettings(wait_seconds=5), events=WaitableSink()) as rt:
        yield rt


def test_the_tool_and_the_delivery_take_no_lookup_callbacks() -> None:
    params = inspect.signature(A2ATool.__init__).parameters
    assert "workspace_for" not in params and "hops_for" not in params
    assert not hasattr(ResultDelivery, "workspace_for")
    assert list(inspect.signature(A2ATool.run).parameters) == ["self", "action", "args", "chat", "by"]  # by: who asks


async def test_the_tool_sends_for_a_target_value_with_the_database_blocked(
    runtime: Runtime, workspace: Workspace, agent: TestAgent, django_db_blocker
) -> None:
    """No row exists for the target, and any database access would raise: the value is all the tool needs."""
    workspace.save_agents([{"name": "echo", "url": agent.url}], None)
    with django_db_blocker.block():
        out = await runtime.tool.run("send", {"agent": "echo", "message": "hello"}, Chat("ghost", workspace, 7))
    assert out["state"] == "completed" and out["text"] == "echo: hello"
    assert agent.received[0].metadata["volcanic.hops"] == 8


async def test_the_console_send_carries_the_hops_kept_now(
    runtime: Runtime, workspace: Workspace, agent: TestAgent, settings
) -> None:
    """A count another process writes (an `a2a.inbound` message, a host's call) goes out with the very next
    send: the target is read at each call, not kept in a per-process cache."""
    workspace.save_agents([{"name": "echo", "url": agent.url}], None)
    await ChatTarget.objects.acreate(id="team", name="Team", workspace=str(workspace.root), inbound_hops=4)
    assert (await scope.run_tool("send", {"agent": "echo", "message": "one"}, "team"))["state"] == "completed"
    await ChatTarget.objects.filter(pk="team").aupdate(inbound_hops=9)
    assert (await scope.run_tool("send", {"agent": "echo", "message": "two"}, "team"))["state"] == "completed"
    assert [r.metadata["volcanic.hops"] for r in agent.received] == [5, 10]


async def test_an_unknown_or_disabled_target_is_refused_before_the_tool(runtime: Runtime, workspace: Workspace) -> None:
    await ChatTarget.objects.acreate(id="off", name="Off", workspace=str(workspace.root), enabled=False)
    for target in ("off", "nobody"):
        assert "unknown chat target" in (await scope.run_tool("agents", {}, target))["error"]


async def test_resolution_async_and_sync(workspace: Workspace, tmp_path: Path, settings) -> None:
    settings.WORKSPACE_DIR = tmp_path / "setting"
    assert await aresolve(CONSOLE_TARGET) == Chat(CONSOLE_TARGET, Workspace(tmp_path / "setting"))  # no row yet
    await ChatTarget.objects.acreate(
        id=CONSOLE_TARGET, name="Console", workspace=str(workspace.root), inbound_hops=2, backend="web"
    )
    await ChatTarget.objects.acreate(id="tg", name="Tg", workspace=str(workspace.root), backend="telegram")
    # the console's workspace is the setting's, whatever its row says; the rest comes from the row
    assert await aresolve(CONSOLE_TARGET) == Chat(CONSOLE_TARGET, Workspace(tmp_path / "setting"), 2)
    assert await aresolve("tg") == Chat("tg", workspace, 0, "telegram")
    assert await aresolve("nobody") is None


def test_resolution_sync(workspace: Workspace) -> None:
    ChatTarget.objects.create(id="team", name="Team", workspace=str(workspace.root), inbound_hops=3)
    assert resolve("team") == Chat("team", workspace, 3)
    ChatTarget.objects.filter(pk="team").update(enabled=False)
    assert resolve("team") is None
