"""`manage.py a2a ...`: the tool from a shell, its JSON output and exit behaviour."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.models import ChatTarget
from tests.support.agents import TestAgent

pytestmark = pytest.mark.django_db


@pytest.fixture
def console(settings, tmp_path: Path, agent: TestAgent) -> Workspace:
    ws = Workspace(tmp_path / "console-ws")
    ws.save_agents([{"name": "echo", "url": agent.url}], None)
    settings.WORKSPACE_DIR = ws.root
    return ws


def a2a(*argv: str) -> dict:
    out = io.StringIO()
    call_command("a2a", *argv, stdout=out)
    return json.loads(out.getvalue())


def test_agents_and_send_print_json(console: Workspace, agent: TestAgent) -> None:
    (listed,) = a2a("agents")["agents"]
    assert listed["name"] == "echo" and listed["skills"]
    sent = a2a("send", "--agent", "echo", "--message", "hello cli")
    assert sent["state"] == "completed" and sent["text"] == "echo: hello cli"
    status = a2a("status", "--agent", "echo", "--task-id", sent["taskId"])
    assert status["taskId"] == sent["taskId"]
    again = a2a("send", "--agent", "echo", "-m", "hello again", "--context-id", sent["contextId"])
    assert again["contextId"] == sent["contextId"]


def test_send_with_files_and_hops(console: Workspace, agent: TestAgent) -> None:
    (console.root / "a.txt").write_text("attached", encoding="utf-8")
    result = a2a("send", "--agent", "echo", "--message", "hello", "--file", "a.txt")
    assert result["state"] == "completed"
    assert agent.received[0].parts[1]["filename"] == "a.txt"
    assert agent.received[0].metadata["volcanic.hops"] == 1


def test_chat_target_workspace_and_hops(console: Workspace, agent: TestAgent, tmp_path: Path) -> None:
    other = Workspace(tmp_path / "other-ws")
    other.save_agents([{"name": "echo-2", "url": agent.url}], None)
    ChatTarget.objects.create(id="team", name="Team", workspace=str(other.root), inbound_hops=4)
    result = a2a("send", "--agent", "echo-2", "--message", "hello", "--target", "team")
    assert result["state"] == "completed"
    assert agent.received[0].metadata["volcanic.hops"] == 5


def test_tool_error_is_a_result(console: Workspace) -> None:
    assert 'unknown agent "nobody"' in a2a("send", "--agent", "nobody", "--message", "hi")["error"]
    assert "unknown chat target" in a2a("agents", "--target", "nowhere")["error"]


def test_usage_error_raises(console: Workspace) -> None:
    with pytest.raises(CommandError):
        call_command("a2a", "launch", stdout=io.StringIO())
    with pytest.raises(CommandError):
        call_command("a2a", "send", "--bogus", stdout=io.StringIO())
