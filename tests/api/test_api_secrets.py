"""The JSON tool API, end to end, against a caller and an agent after the console's secrets: the
console's own files are never attached, an echoed key is masked, and answers never show server paths."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient, override_settings

from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.models import ApiToken, ChatTarget
from tests.support.agents import TestAgent
from tests.support.toolkit import entry, write_agents

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "api-agent-key-never-shown-0123"


@pytest.fixture
async def call(tmp_path: Path, workspace: Workspace) -> AsyncIterator[Callable[..., Any]]:
    """POST a tool call as the agent host of target `bot`, in a runtime built over a data folder of its own."""
    from tests.support.runtime import fresh_runtime

    data = tmp_path / "data"
    data.mkdir()
    (data / "secret_key").write_text("the console's signing key", encoding="utf-8")
    with override_settings(DATA_DIR=data):
        async with fresh_runtime():
            target = await ChatTarget.objects.acreate(id="bot", name="bot", workspace=str(workspace.root))
            _, token = await sync_to_async(ApiToken.issue)(target, "test host")
            client = AsyncClient()

            async def post(body: dict[str, Any]) -> dict[str, Any]:
                resp = await client.post(
                    "/api/v1/targets/bot/tool",
                    json.dumps(body).encode(),
                    content_type="application/json",
                    headers={"Authorization": f"Bearer {token}"},
                )
                assert resp.status_code == 200, resp.content
                return json.loads(resp.content)

            yield post


@pytest.fixture
def echo(workspace: Workspace, make_agent: Callable[..., TestAgent]) -> TestAgent:
    agent = make_agent(key=KEY, push=False)
    write_agents(workspace, entry("echo", agent, key=KEY))
    return agent


async def test_the_console_state_cannot_be_attached_through_the_api(
    call, echo: TestAgent, workspace: Workspace, tmp_path: Path
) -> None:
    (workspace.root / "data-link").symlink_to(tmp_path / "data")
    for path in (".volcanic/a2a/agents.json", "data-link/secret_key"):
        answer = await call({"action": "send", "agent": "echo", "message": "hi", "files": [path]})
        assert answer == {
            "error": f"file {path!r} is the console's own state (agent keys, push tokens); it can never be attached"
        }
    assert echo.received == []


async def test_an_echoed_key_and_server_paths_never_reach_the_host(call, echo: TestAgent, workspace: Workspace) -> None:
    leaked = await call({"action": "send", "agent": "echo", "message": "leak"})
    assert echo.received[0].headers["x-api-key"] == KEY
    assert leaked["state"] == "completed" and leaked["text"] == "the key was ***"
    refused = await call({"action": "send", "agent": "echo", "message": "leak error"})
    assert "refused: the key was ***" in refused["error"]
    unknown = await call({"action": "send", "agent": "nobody", "message": "hi"})
    assert unknown["error"].endswith("or add it to .volcanic/a2a/agents.json")
    answers = json.dumps([leaked, refused, unknown])
    assert KEY not in answers and str(workspace.root) not in answers
