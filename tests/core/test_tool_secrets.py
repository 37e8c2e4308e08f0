"""The console's secrets against a hostile caller: the tool never attaches the console's own state."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from a2aconsole.core.client import new_http_client
from a2aconsole.core.pending import WatchRecord
from a2aconsole.core.workspace import Workspace
from tests.support.agents import TestAgent
from tests.support.toolkit import TARGET, entry, make_tool, write_agents

KEY = "k3y-of-the-echo-agent-0123456789"
TOKEN = "push-token-of-a-watch-abcdefghijklmnopqrstuvw"
OWN_STATE = "is the console's own state (agent keys, push tokens); it can never be attached"


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    client = new_http_client()
    yield client
    await client.aclose()


@pytest.fixture
def keyed(workspace: Workspace, make_agent) -> TestAgent:
    agent = make_agent(key=KEY, push=False)
    write_agents(workspace, entry("echo", agent, key=KEY))
    return agent


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A data folder beside the workspace, with the files the console keeps there."""
    d = tmp_path / "data"
    d.mkdir()
    for name in ("db.sqlite3", "db.sqlite3-wal", "secret_key", "setup_token", ".secret_key.lock"):
        (d / name).write_text("console secret", encoding="utf-8")
    return d


def with_pending_token(ws: Workspace) -> None:
    rec = WatchRecord("w1", TARGET, "echo", "t1", push_token=TOKEN, source="push")
    ws.pending_path.write_text(json.dumps([rec.to_json()]), encoding="utf-8")


# item 1: the console's own state is never attachable


@pytest.mark.parametrize(
    "path",
    [
        ".volcanic/a2a/agents.json",
        ".volcanic/a2a/pending.json",
        ".volcanic/a2a/.lock",
        ".volcanic/a2a/.agents.json.x1.tmp",
        "./.volcanic/a2a/agents.json",
        "inbox/../.volcanic/a2a/agents.json",
        ".VOLCANIC/a2a/agents.json",
        ".Volcanic/A2A/agents.json",
        "link-to-state/agents.json",
        "agents-link.json",
        "nested/.volcanic/a2a/agents.json",
    ],
)
async def test_console_state_in_the_workspace_is_never_attached(
    http, workspace: Workspace, keyed: TestAgent, path: str
) -> None:
    with_pending_token(workspace)
    (workspace.a2a_dir / ".lock").write_text("", encoding="utf-8")
    (workspace.a2a_dir / ".agents.json.x1.tmp").write_text(KEY, encoding="utf-8")
    for variant in (".VOLCANIC", ".Volcanic/A2A"):  # a case-insensitive file system would see .volcanic itself
        (workspace.root / variant).mkdir(parents=True, exist_ok=True)
        (workspace.root / variant / "agents.json").write_text(KEY, encoding="utf-8")
    (workspace.root / "link-to-state").symlink_to(workspace.a2a_dir)
    (workspace.root / "agents-link.json").symlink_to(workspace.agents_path)
    nested = Workspace(workspace.root / "nested")  # another chat's workspace inside this one
    nested.save_agents([{"name": "x", "url": "http://127.0.0.1:1/", "key": KEY}], None)

    result = await make_tool(http, workspace).run("send", {"agent": "echo", "message": "hi", "files": [path]}, TARGET)
    assert result == {"error": f"file {path!r} {OWN_STATE}"}
    assert keyed.received == []  # nothing was sent


@pytest.mark.parametrize("kind", ["file", "wal", "lock", "symlink-folder", "symlink-file", "absolute"])
async def test_the_data_folder_is_never_attached(
    http, workspace: Workspace, keyed: TestAgent, data_dir: Path, kind: str
) -> None:
    (workspace.root / "data-link").symlink_to(data_dir)
    (workspace.root / "key-link").symlink_to(data_dir / "secret_key")
    path = {
        "file": "data-link/secret_key",
        "wal": "data-link/db.sqlite3-wal",
        "lock": "data-link/.secret_key.lock",
        "symlink-folder": "data-link/setup_token",
        "symlink-file": "key-link",
        "absolute": str(data_dir / "db.sqlite3"),
    }[kind]
    tool = make_tool(http, workspace, private_paths=[data_dir])
    result = await tool.run("send", {"agent": "echo", "message": "hi", "files": [path]}, TARGET)
    assert result["error"].endswith(OWN_STATE)
    assert keyed.received == []


async def test_a_workspace_inside_the_data_folder_attaches_nothing_of_it(
    http, tmp_path: Path, make_agent, data_dir: Path
) -> None:
    ws = Workspace(data_dir / "ws")
    ws.root.mkdir()
    (ws.root / "notes.txt").write_text("notes", encoding="utf-8")
    agent = make_agent(push=False)
    write_agents(ws, entry("echo", agent))
    tool = make_tool(http, ws, private_paths=[data_dir])
    for path in ("notes.txt", "../secret_key"):
        result = await tool.run("send", {"agent": "echo", "message": "hi", "files": [path]}, TARGET)
        assert result["error"].endswith(OWN_STATE), result
    assert agent.received == []


async def test_a_data_folder_inside_the_workspace_is_refused_but_its_neighbours_attach(
    http, workspace: Workspace, keyed: TestAgent
) -> None:
    data = workspace.root / "Data"
    data.mkdir()
    (data / "secret_key").write_text("console secret", encoding="utf-8")
    (workspace.root / "data-notes.txt").write_text("mine", encoding="utf-8")
    tool = make_tool(http, workspace, private_paths=[data])
    refused = await tool.run("send", {"agent": "echo", "message": "hi", "files": ["Data/secret_key"]}, TARGET)
    assert refused["error"].endswith(OWN_STATE)
    sent = await tool.run("send", {"agent": "echo", "message": "hi", "files": ["data-notes.txt"]}, TARGET)
    assert sent["state"] == "completed"
    assert [p.get("filename") for p in keyed.received[0].parts[1:]] == ["data-notes.txt"]
