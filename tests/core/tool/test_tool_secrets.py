"""The console's secrets against a hostile caller and a hostile agent: the tool never attaches its own
state, and nothing an agent echoes back (its key, a push token) or the server's folders leave the tool."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from a2aconsole.core import pending
from a2aconsole.core.events import MemorySink
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.records import WatchRecord
from a2aconsole.core.scrubber import MASK
from tests.support.agents import TestAgent
from tests.support.clock import FakeClock
from tests.support.toolkit import TARGET, entry, make_tool, write_agents

KEY = "k3y-of-the-echo-agent-0123456789"
TOKEN = "push-token-of-a-watch-abcdefghijklmnopqrstuvw"
OWN_STATE = "is the console's own state (agent keys, push tokens); it can never be attached"


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
    pending.file_path(ws).write_text(json.dumps([rec.to_json()]), encoding="utf-8")


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


# item 2: what an agent echoes is scrubbed: results, errors, events


async def test_a_key_the_agent_echoes_is_masked_in_the_result_and_events(
    http, workspace: Workspace, keyed: TestAgent
) -> None:
    sink = MemorySink()
    result = await make_tool(http, workspace, events=sink).run("send", {"agent": "echo", "message": "leak"}, TARGET)
    assert keyed.received[0].headers["x-api-key"] == KEY  # the agent did get it, and echoed it
    assert result["state"] == "completed" and result["text"] == f"the key was {MASK}"
    assert result["artifacts"][0]["text"] == f"the key was {MASK}"
    assert KEY not in json.dumps(result)
    events = json.dumps([e.to_json() for e in sink.events])
    assert "result" in sink.kinds() and KEY not in events and f"the key was {MASK}" in events


async def test_a_key_the_agent_echoes_in_an_error_is_masked(http, workspace: Workspace, keyed: TestAgent) -> None:
    sink = MemorySink()
    tool = make_tool(http, workspace, events=sink)
    result = await tool.run("send", {"agent": "echo", "message": "leak error"}, TARGET)
    assert "refused: the key was" in result["error"], result
    assert KEY not in result["error"] and MASK in result["error"]
    [error] = [e for e in sink.events if e.kind == "error"]
    assert KEY not in json.dumps(error.to_json()) and MASK in error.data["message"]


async def test_a_bearer_key_echoed_is_masked(http, workspace: Workspace, make_agent) -> None:
    agent = make_agent(key=KEY, bearer_only=True, push=False)
    write_agents(workspace, entry("echo", agent, key=KEY))
    result = await make_tool(http, workspace).run("send", {"agent": "echo", "message": "leak"}, TARGET)
    assert result["text"] == f"the key was Bearer {MASK}"


async def test_push_tokens_and_keys_of_other_entries_are_masked(http, workspace: Workspace, agent: TestAgent) -> None:
    other_key = "key-of-an-entry-with-a-bad-name"
    workspace.a2a_dir.mkdir(parents=True, exist_ok=True)
    workspace.agents_path.write_text(
        json.dumps([{"name": "echo", "url": agent.url}, {"name": "Bad Name", "url": agent.url, "key": other_key}]),
        encoding="utf-8",
    )
    with_pending_token(workspace)
    sink = MemorySink()
    tool = make_tool(http, workspace, events=sink)
    result = await tool.run("send", {"agent": "echo", "message": f"hello {TOKEN} and {other_key}"}, TARGET)
    assert result["text"] == f"echo: hello {MASK} and {MASK}"
    dumped = json.dumps(result) + json.dumps([e.to_json() for e in sink.events])
    assert TOKEN not in dumped and other_key not in dumped


async def test_a_short_key_is_not_masked_in_ordinary_words(http, workspace: Workspace, make_agent) -> None:
    """A key under 8 characters cannot be told from a word: masking it would garble every answer."""
    agent = make_agent(key="e", push=False)
    write_agents(workspace, entry("echo", agent, key="e"))
    result = await make_tool(http, workspace).run("send", {"agent": "echo", "message": "hello there"}, TARGET)
    assert result["text"] == "echo: hello there"


# item 17: answers name files from the workspace, never the server's folders


async def test_errors_name_files_relative_to_the_workspace(http, workspace: Workspace, keyed: TestAgent) -> None:
    tool = make_tool(http, workspace)
    unknown = await tool.run("send", {"agent": "nobody", "message": "hi"}, TARGET)
    assert unknown["error"].endswith("use action=agents, or add it to .volcanic/a2a/agents.json")
    workspace.agents_path.write_text('[{"name": "bad name", "url": "x"}]', encoding="utf-8")
    invalid = await tool.run("send", {"agent": "bad name", "message": "hi"}, TARGET)
    assert invalid["error"].startswith('agent "bad name" has an invalid entry: .volcanic/a2a/agents.json entry 1')
    workspace.agents_path.write_bytes(b"\xff[")
    binary = await tool.run("agents", {}, TARGET)
    assert binary["error"].startswith(".volcanic/a2a/agents.json is not valid UTF-8")
    os.unlink(workspace.agents_path)
    empty = await tool.run("agents", {}, TARGET)
    assert empty["note"] == "no agents yet: add them to .volcanic/a2a/agents.json"
    for answer in (unknown, invalid, binary, empty):
        assert str(workspace.root) not in json.dumps(answer)


async def test_a_result_names_saved_files_relative_and_never_the_workspace(
    http, workspace: Workspace, agent: TestAgent
) -> None:
    write_agents(workspace, entry("echo", agent))
    clock = FakeClock()
    result = await make_tool(http, workspace, clock=clock).run("send", {"agent": "echo", "message": "file"}, TARGET)
    assert result["files"] == ["inbox/a2a/echo/report.pdf"]
    assert str(workspace.root) not in json.dumps(result)
