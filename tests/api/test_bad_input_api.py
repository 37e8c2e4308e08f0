"""Bad bodies from an agent host: each gets a 4xx naming the problem, nothing reaches an agent, nothing is written."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import AsyncClient

from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.models import TaskEvent
from tests.support.agents import TestAgent
from tests.support.api_host import make_host

pytestmark = pytest.mark.django_db(transaction=True)

# (body, expected status, the field the answer must name, a word its error must contain)
BAD_BODIES: list[tuple[Any, int, str | None, str]] = [
    (b"{not json", 400, None, "JSON"),
    (b"\xff\xfe\x00garbage", 400, None, "JSON"),
    (b"[" * 100_000 + b"]" * 100_000, 400, None, "nested"),
    (b"", 400, None, "object"),
    ([], 400, None, "object"),
    ("send", 400, None, "object"),
    ({}, 400, "action", "required"),
    ({"action": "delete"}, 400, "action", "one of"),
    ({"action": ["send"]}, 400, "action", "one of"),
    ({"action": "send", "agent": "echo"}, 400, "message", "needs a message, files or data"),
    ({"action": "send", "agent": 7, "message": "hi"}, 400, "agent", "string"),
    ({"action": "send", "agent": "echo", "message": {"text": "hi"}}, 400, "message", "string"),
    ({"action": "send", "agent": "echo", "message": "hi", "files": "a.txt"}, 400, "files", "list"),
    ({"action": "send", "agent": "echo", "message": "hi", "files": [None]}, 400, "files", "list"),
    ({"action": "send", "agent": "echo", "message": "hi", "files": ["a"] * 51}, 400, "files", "at most"),
    ({"action": "send", "agent": "echo", "message": "hi", "hops": -1}, 400, "hops", "whole number"),
    ({"action": "send", "agent": "echo", "message": "hi", "hops": 1.5}, 400, "hops", "whole number"),
    ({"action": "send", "agent": "echo", "message": "hi", "hops": True}, 400, "hops", "whole number"),
    ({"action": "send", "agent": "echo", "message": "hi", "hops": "2"}, 400, "hops", "whole number"),
    ({"action": "send", "agent": "echo", "message": "hi", "extra": 1}, 400, "extra", "unknown field"),
    ({"action": "status", "agent": "echo"}, 400, "taskId", "required"),
    ({"action": "cancel", "agent": "echo", "taskId": 12}, 400, "taskId", "string"),
    ({"action": "send", "agent": "e" * 41, "message": "hi"}, 400, "agent", "at most"),
    ({"action": "send", "agent": "echo", "message": "x" * 1_000_001}, 400, "message", "at most"),
    ({"action": "send", "agent": "echo", "contextId": "c" * 201, "message": "hi"}, 400, "contextId", "at most"),
]


def _snapshot(workspace: Workspace) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(workspace.root.rglob("*")) if p.is_file()}


async def test_bad_bodies_get_a_specific_400_and_change_nothing(
    workspace: Workspace,
    api_runtime: Any,
    echo: TestAgent,
) -> None:
    host = await make_host(workspace)
    before = _snapshot(workspace)
    for body, status, field, word in BAD_BODIES:
        got, answer = await host.call(body)
        label = repr(body)[:60]
        assert got == status, label
        assert answer.get("field") == field, label
        assert word.lower() in answer["error"].lower(), label
        assert "Traceback" not in json.dumps(answer)
    assert echo.requests == [] and echo.methods == []
    assert _snapshot(workspace) == before
    assert await TaskEvent.objects.acount() == 0
    target = await type(host.target).objects.aget(pk=host.target.pk)
    assert target.inbound_hops == 0


async def test_a_body_over_the_upload_limit_is_413_json(workspace: Workspace, api_runtime: Any, settings: Any) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    host = await make_host(workspace)
    status, answer = await host.call({"action": "send", "agent": "echo", "message": "x" * 20_000})
    assert status == 413 and "over 10000 bytes" in answer["error"]


async def test_odd_but_valid_text_and_hostile_paths_get_tool_errors_not_500s(
    workspace: Workspace,
    api_runtime: Any,
    echo: TestAgent,
) -> None:
    """Unicode, null bytes and path traversal pass the API's checks; the tool answers each with a readable error."""
    host = await make_host(workspace)
    outside = workspace.root.parent / "outside-secret.txt"
    outside.write_text("not yours")
    for files in (["../outside-secret.txt"], [str(outside)], ["nul\x00.txt"], ["/etc/passwd"], ["missing.txt"]):
        status, result = await host.call({"action": "send", "agent": "echo", "message": "hi", "files": files})
        assert status == 200 and isinstance(result.get("error"), str) and result["error"], files
        assert "not yours" not in json.dumps(result)
    assert echo.methods == []  # a refused attachment sends nothing
    for agent in ("no-such-agent", "echo\x00", "ЭХО", "../echo"):
        status, result = await host.call({"action": "send", "agent": agent, "message": "hi"})
        assert status == 200 and isinstance(result.get("error"), str), agent
    assert echo.methods == []
    status, result = await host.call({"action": "send", "agent": "echo", "message": "héllo \x00 🌍 مرحبا"})
    assert status == 200 and "error" not in result, result


async def test_unknown_target_and_odd_target_ids_get_a_bare_401(workspace: Workspace, api_runtime: Any) -> None:
    host = await make_host(workspace)
    client = AsyncClient()
    for target_id in ("nope", "..%2F..%2Fetc", "x" * 5000, "%00", "b%C3%B6t"):
        resp = await client.post(
            f"/api/v1/targets/{target_id}/tool",
            b'{"action": "agents"}',
            content_type="application/json",
            headers={"Authorization": f"Bearer {host.token}"},
        )
        if "%2F" in target_id:  # a slash is no target id: no route at all
            assert resp.status_code == 404, target_id
            continue
        assert resp.status_code == 401, target_id
        assert json.loads(resp.content) == {"error": "unauthorized"}
    resp = await client.get(f"/api/v1/targets/{host.target.id}/tool", headers={"Authorization": f"Bearer {host.token}"})
    assert resp.status_code == 405


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [v for k, v in node.items() if k == "$ref"] + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


async def test_openapi_document_is_openapi_31_and_matches_the_parser(api_runtime: Any) -> None:
    """The structure OpenAPI 3.1 requires, every $ref resolving, and the body schema the parser enforces."""
    from a2aconsole.api.calls import ACTIONS, FIELDS, MAX_HOPS
    from a2aconsole.core.tool.schema import MAX_FILES, MAX_MESSAGE, MAX_REF

    client = AsyncClient()
    resp = await client.get("/api/v1/openapi.json")
    assert resp.status_code == 200 and resp["Content-Type"] == "application/json"
    doc = json.loads(resp.content)
    assert doc["openapi"].startswith("3.1.")
    assert doc["info"]["title"] and doc["info"]["version"]
    assert doc["servers"][0]["url"].startswith("http")
    op_ids: list[str] = []
    for path, item in doc["paths"].items():
        assert path.startswith("/")
        for method, op in item.items():
            assert method in ("get", "post", "put", "delete", "patch")
            op_ids.append(op["operationId"])
            declared = {p["name"] for p in op.get("parameters", []) if p["in"] == "path"}
            assert declared == {seg[1:-1] for seg in path.split("/") if seg.startswith("{")}, path
            for p in op.get("parameters", []):
                assert p["in"] != "path" or p["required"] is True
            assert op["responses"]
            for code, response in op["responses"].items():
                assert code.isdigit() and response["description"], (path, code)
            for requirement in op.get("security", []):
                assert set(requirement) <= set(doc["components"]["securitySchemes"])
    assert len(op_ids) == len(set(op_ids))
    for ref in _refs(doc):
        node: Any = doc
        for part in ref.removeprefix("#/").split("/"):
            node = node[part]
        assert isinstance(node, dict), ref
    call = doc["components"]["schemas"]["ToolCall"]
    assert set(call["properties"]) == set(FIELDS) and call["additionalProperties"] is False
    assert call["properties"]["action"]["enum"] == list(ACTIONS)
    assert call["properties"]["files"]["maxItems"] == MAX_FILES
    assert call["properties"]["hops"]["maximum"] == MAX_HOPS
    assert call["properties"]["message"]["maxLength"] == MAX_MESSAGE
    assert call["properties"]["taskId"]["maxLength"] == call["properties"]["contextId"]["maxLength"] == MAX_REF
    responses = doc["paths"]["/api/v1/targets/{targetId}/tool"]["post"]["responses"]
    assert {"200", "400", "401", "403", "413"} <= set(responses)

    resp = await client.get("/api/v1/tool-schema")
    tool = json.loads(resp.content)
    assert tool["name"] == "a2a" and tool["description"] and tool["parameters"]["type"] == "object"
    assert set(tool["parameters"]["properties"]) <= set(FIELDS)
