"""The tool's `agents` action against real loopback agents."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from a2aconsole.core.files.workspace import Workspace
from tests.support.agents import TestAgent
from tests.support.js_agents import SdkAgent
from tests.support.toolkit import TARGET, entry, make_tool, write_agents

DEAD_URL = "http://127.0.0.1:9/"  # the discard port: nothing listens there


async def test_agents_lists_cards_and_skills(http, workspace: Workspace, agent: TestAgent) -> None:
    write_agents(workspace, entry("echo", agent), entry("echo-2", agent, description="my own words"))
    result = await make_tool(http, workspace).run("agents", {}, TARGET)
    first, second = result["agents"]
    assert first["name"] == "echo"
    assert first["description"] == "A scripted agent for tests"
    assert first["cardName"] == "Loopback test agent"
    assert first["skills"][0] == {
        "id": "echo",
        "name": "Echo",
        "description": "Repeats what it is told",
        "examples": ["hello there", "hello again"],
    }
    assert [s["id"] for s in first["skills"]] == ["echo", "files"]
    assert first["streaming"] is True and first["push"] is True
    assert second["description"] == "my own words"


async def test_agents_extended_card_with_key(
    http, workspace: Workspace, make_sdk_agent: Callable[..., SdkAgent]
) -> None:
    agent = make_sdk_agent(key="k-ext-123", extended=True)
    plain = make_sdk_agent(extended=True)
    write_agents(workspace, entry("keyed", agent, key="k-ext-123"), entry("plain", plain))
    keyed, public = (await make_tool(http, workspace).run("agents", {}, TARGET))["agents"]
    assert "secret" in [s["id"] for s in keyed["skills"]]
    assert keyed["description"].endswith("(extended)")
    assert "secret" not in [s["id"] for s in public["skills"]]  # no key: the public card only


async def test_agents_unreachable_agent_listed(http, workspace: Workspace, agent: TestAgent) -> None:
    write_agents(workspace, entry("gone", DEAD_URL), entry("echo", agent))
    gone, echo = (await make_tool(http, workspace).run("agents", {}, TARGET))["agents"]
    assert gone["name"] == "gone" and "unreachable" in gone["unreachable"]
    assert '"gone"' in gone["unreachable"]
    assert echo["skills"]


async def test_agents_file_edited_applies_to_next_call(http, workspace: Workspace, agent: TestAgent) -> None:
    tool = make_tool(http, workspace)
    write_agents(workspace, entry("echo", agent))
    assert [a["name"] for a in (await tool.run("agents", {}, TARGET))["agents"]] == ["echo"]
    workspace.agents_path.write_text(
        f'[{{"name": "renamed", "url": "{agent.url}", "description": "edited by hand"}}]', encoding="utf-8"
    )
    (listed,) = (await tool.run("agents", {}, TARGET))["agents"]
    assert listed["name"] == "renamed" and listed["description"] == "edited by hand"
    result = await tool.run("send", {"agent": "echo", "message": "hello"}, TARGET)
    assert 'unknown agent "echo"' in result["error"]


async def test_agents_malformed_file_reports_file(http, workspace: Workspace) -> None:
    workspace.agents_path.parent.mkdir(parents=True, exist_ok=True)
    workspace.agents_path.write_text('[{"name": "x",', encoding="utf-8")
    tool = make_tool(http, workspace)
    result = await tool.run("agents", {}, TARGET)
    assert result["error"].startswith(".volcanic/a2a/agents.json is not valid JSON")
    result = await tool.run("send", {"agent": "x", "message": "hi"}, TARGET)
    assert result["error"].startswith(".volcanic/a2a/agents.json is not valid JSON")
    assert str(workspace.root) not in json.dumps(result)


async def test_an_agents_file_that_cannot_be_read_is_named_in_a_clear_error(http, workspace: Workspace) -> None:
    """A folder where agents.json should be (or a file that cannot be read): every action says which file and
    why, as for a malformed one, and nothing is sent."""
    workspace.agents_path.mkdir(parents=True)
    tool = make_tool(http, workspace)
    for action, args in (("agents", {}), ("send", {"agent": "x", "message": "hi"}), ("status", {"agent": "x"})):
        result = await tool.run(action, args, TARGET)
        assert result["error"].startswith(".volcanic/a2a/agents.json cannot be read (IsADirectoryError)"), result
        assert "no agents can be used until the file is fixed" in result["error"]
        assert str(workspace.root) not in json.dumps(result)


async def test_agents_invalid_entry_listed_as_problem(http, workspace: Workspace, agent: TestAgent) -> None:
    workspace.agents_path.parent.mkdir(parents=True, exist_ok=True)
    workspace.agents_path.write_text(
        f'[{{"name": "Bad Name", "url": "{agent.url}"}}, {{"name": "ok", "url": "{agent.url}"}}]', encoding="utf-8"
    )
    result = await make_tool(http, workspace).run("agents", {}, TARGET)
    assert [a["name"] for a in result["agents"]] == ["ok"]
    assert "entry 1" in result["problems"][0]


async def test_agents_slow_card_does_not_block_others(
    http, workspace: Workspace, make_agent: Callable[..., TestAgent]
) -> None:
    slow, quick = make_agent(), make_agent()
    slow.card_delay = 1.0
    write_agents(workspace, entry("slow", slow), entry("quick", quick))
    tool = make_tool(http, workspace, card_timeout_seconds=0.2)
    started = time.monotonic()
    slow_info, quick_info = (await tool.run("agents", {}, TARGET))["agents"]
    assert time.monotonic() - started < 0.9
    assert "did not answer in time" in slow_info["unreachable"]
    assert quick_info["skills"]


async def test_agents_empty_workspace(http, workspace: Workspace) -> None:
    result = await make_tool(http, workspace).run("agents", {}, TARGET)
    assert result["agents"] == [] and "agents.json" in result["note"]


async def test_unknown_action(http, workspace: Workspace) -> None:
    tool = make_tool(http, workspace)
    assert "unknown action" in (await tool.run("list", {}, TARGET))["error"]


async def test_agents_extended_card_timeout_says_timed_out(http, workspace: Workspace, make_agent) -> None:
    """An extended card that never comes within the card timeout: the public card is listed, and the note
    says it timed out (a TimeoutError's text is empty)."""
    agent = make_agent(key="k-ext-slow-123", extended=True)
    agent.extended_card_gate = "late"  # held until the agent stops
    write_agents(workspace, entry("slow", agent, key="k-ext-slow-123"))
    (slow,) = (await make_tool(http, workspace, card_timeout_seconds=0.3).run("agents", {}, TARGET))["agents"]
    assert slow["note"] == "extended card not available: timed out after 0.3 s"
    assert "extendedCard" not in slow and "secret" not in [s["id"] for s in slow["skills"]]
    assert "GetExtendedAgentCard" in agent.methods


async def test_agents_says_which_card_url_was_tried(http, workspace: Workspace, agent: TestAgent) -> None:
    """A card that cannot be read names the URLs tried, masked (its query held a secret): after a 404, the legacy
    `agent.json` too; a send says it too."""
    wrong = f"http://127.0.0.1:{agent.port}/nope/?token=s3cret-in-query"
    write_agents(workspace, entry("gone", DEAD_URL), entry("wrong", wrong))
    tool = make_tool(http, workspace)
    gone, bad = (await tool.run("agents", {}, TARGET))["agents"]
    assert gone["unreachable"].endswith("is it running? Tried http://127.0.0.1:9/.well-known/agent-card.json")
    tried = f"http://127.0.0.1:{agent.port}/nope/.well-known/agent-card.json"
    legacy = f"http://127.0.0.1:{agent.port}/nope/.well-known/agent.json"
    assert bad["unreachable"].endswith(f"HTTP 404; check its url. Tried {tried} and {legacy}")
    sent = await tool.run("send", {"agent": "gone", "message": "hello"}, TARGET)
    assert sent["error"].endswith("Tried http://127.0.0.1:9/.well-known/agent-card.json")
    assert "s3cret" not in json.dumps([gone, bad, sent])


async def test_agents_flags_a_card_that_asks_for_a_key_the_entry_lacks(
    http, workspace: Workspace, make_sdk_agent: Callable[..., SdkAgent]
) -> None:
    keyed, bearer = make_sdk_agent(key="k-need-1"), make_sdk_agent(key="k-need-1", bearer_only=True)
    open_ = make_sdk_agent()
    write_agents(
        workspace,
        entry("keyed", keyed),
        entry("bearer", bearer),
        entry("with-key", keyed, key="k-need-1"),
        entry("open", open_),
    )
    listed = {a["name"]: a for a in (await make_tool(http, workspace).run("agents", {}, TARGET))["agents"]}
    assert listed["keyed"]["needsKey"] is True and listed["bearer"]["needsKey"] is True
    assert "needsKey" not in listed["with-key"] and "needsKey" not in listed["open"]
    assert listed["keyed"]["skills"]  # the public card is read all the same
