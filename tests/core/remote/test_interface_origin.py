"""An agent's card may name interfaces anywhere; calls go only to the origin agents.json names, or to one the
owner confirmed (`trustedOrigins`). Against real agents on both SDKs (JSON-RPC and REST cards)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from a2aconsole.core import pending
from a2aconsole.core.files.agents import AgentEntry, origin, parse_agents
from a2aconsole.core.files.workspace import Workspace
from tests.support.agents import TestAgent
from tests.support.js_agents import SdkAgent
from tests.support.toolkit import TARGET, entry, make_tool, write_agents


@pytest.fixture
def other(make_agent: Callable[..., TestAgent]) -> TestAgent:
    """The address a hostile card points the calls at: a real agent, which records whatever reaches it."""
    return make_agent()


def _reached(agent: TestAgent) -> list[str]:
    return [f"{method} {path}" for method, path, _ in agent.requests]


async def test_an_interface_on_another_origin_gets_nothing_and_the_answer_says_why(
    http, workspace: Workspace, make_sdk_agent: Callable[..., SdkAgent], other: TestAgent
) -> None:
    decoy = make_sdk_agent(key="decoy-key-1", interface_url=f"{other.url}internal-admin/purge?all=1")
    write_agents(workspace, entry("decoy", decoy, key="decoy-key-1"))
    tool = make_tool(http, workspace)
    for action, args in (
        ("send", {"agent": "decoy", "message": "my private words"}),
        ("status", {"agent": "decoy", "taskId": "t-1"}),
        ("cancel", {"agent": "decoy", "taskId": "t-1"}),
    ):
        result = await tool.run(action, args, TARGET)
        error = result.get("error", "")
        assert f"its card points its calls at {origin(other.url)}" in error, result
        assert f"another origin than {origin(decoy.url)}" in error
        assert "nothing was sent" in error and "trustedOrigins" in error
        assert "purge" not in error and "decoy-key-1" not in json.dumps(result)  # the origin only, never the path
    assert _reached(other) == []
    assert not decoy.received
    assert pending.read(workspace).records == []


async def test_a_confirmed_origin_is_used_and_the_key_stays_home(
    http, workspace: Workspace, make_agent: Callable[..., TestAgent], other: TestAgent
) -> None:
    decoy = make_agent(key="decoy-key-2", interface_url=other.url)
    write_agents(workspace, entry("decoy", decoy, key="decoy-key-2", trustedOrigins=[other.url.rstrip("/")]))
    result = await make_tool(http, workspace).run("send", {"agent": "decoy", "message": "hello"}, TARGET)
    assert result["state"] == "completed", result
    assert [r.text for r in other.received] == ["hello"]
    for _, _, headers in other.requests:  # confirmed for the messages, not for the key
        assert "x-api-key" not in headers and "authorization" not in headers


async def test_a_foreign_interface_listed_first_is_passed_over(
    http, workspace: Workspace, make_sdk_agent: Callable[..., SdkAgent], other: TestAgent
) -> None:
    agent = make_sdk_agent(decoy_interface=other.url)
    write_agents(workspace, entry("agent", agent))
    result = await make_tool(http, workspace).run("send", {"agent": "agent", "message": "hello"}, TARGET)
    assert result["state"] == "completed", result
    assert [r.text for r in agent.received] == ["hello"]
    assert _reached(other) == []


async def test_the_extended_card_is_not_asked_of_another_origin(
    http, workspace: Workspace, make_sdk_agent: Callable[..., SdkAgent], other: TestAgent
) -> None:
    decoy = make_sdk_agent(key="decoy-key-3", extended=True, interface_url=other.url)
    write_agents(workspace, entry("decoy", decoy, key="decoy-key-3"))
    result = await make_tool(http, workspace).run("agents", {}, TARGET)
    (info,) = result["agents"]
    assert "extendedCard" not in info
    assert "extended card not available" in info["note"] and origin(other.url) in info["note"]
    assert _reached(other) == []


async def test_confirming_an_origin_takes_effect_on_the_next_call(
    http, workspace: Workspace, make_agent: Callable[..., TestAgent], other: TestAgent
) -> None:
    decoy = make_agent(interface_url=other.url)
    write_agents(workspace, entry("decoy", decoy))
    tool = make_tool(http, workspace)
    refused = await tool.run("send", {"agent": "decoy", "message": "first"}, TARGET)
    assert "nothing was sent" in refused["error"]
    write_agents(workspace, entry("decoy", decoy, trustedOrigins=[origin(other.url)]))
    sent = await tool.run("send", {"agent": "decoy", "message": "second"}, TARGET)
    assert sent["state"] == "completed", sent
    assert [r.text for r in other.received] == ["second"]


def test_trusted_origins_are_origins_only() -> None:
    bad = [
        "nope",
        ["http://a.example/path"],
        ["ftp://a.example"],
        ["http://user:pw@a.example"],
        ["https://a.example?x=1"],
        [5],
        ["http://a.example"] * 21,
    ]
    for value in bad:
        text = json.dumps([{"name": "a", "url": "http://a.example/", "trustedOrigins": value}])
        entries, problems, _ = parse_agents(text)
        assert entries == [] and len(problems) == 1, value
        assert "trustedOrigins must be a list of at most 20 origins" in problems[0]
    text = json.dumps([{"name": "a", "url": "http://a.example/", "trustedOrigins": ["HTTP://B.example:80/"]}])
    (e,), problems, _ = parse_agents(text)
    assert problems == [] and e.trusted_origins == ("http://b.example:80",)
    assert e.may_call("http://b.example/rpc") and e.may_call("http://a.example:80/x")
    assert not e.may_call("https://b.example/") and not e.may_call("http://b.example:8080/")
    assert e.to_json()["trustedOrigins"] == ["http://b.example:80"]


def test_origins_name_scheme_host_and_port() -> None:
    assert origin("https://Console.Example/a?b#c") == "https://console.example:443"
    assert origin("http://[::1]:8080/x") == "http://[::1]:8080"
    assert origin("ftp://a.example") == "" and origin("not a url") == "" and origin("http://[bad") == ""
    assert AgentEntry("a", "http://u:p@h.example:81/p").origin == "http://h.example:81"
