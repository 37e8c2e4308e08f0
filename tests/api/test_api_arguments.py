"""The tool's arguments at the API boundary: one contract (the core's TOOL_SCHEMA), real text only, files-only sends."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from a2aconsole.api.calls import FIELDS, SCHEMA_NOT_BLANK, call_schema
from a2aconsole.core.files.agents import NAME_MAX_LENGTH
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.tool.schema import MAX_PATH, TOOL_SCHEMA
from a2aconsole.web.models import TaskEvent
from tests.support.agents import TestAgent
from tests.support.api_host import Host

pytestmark = pytest.mark.django_db(transaction=True)

LONE = "\ud800"  # a lone surrogate: valid in JSON (`"\ud800"`), not encodable as UTF-8


def _snapshot(workspace: Workspace) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(workspace.root.rglob("*")) if p.is_file()}


SURROGATES: list[tuple[dict[str, Any], str]] = [
    ({"action": "send", "agent": LONE, "message": "hi"}, "agent"),
    ({"action": "send", "agent": "echo", "message": "hi " + LONE}, "message"),
    ({"action": "send", "agent": "echo", "message": "hi", "contextId": LONE}, "contextId"),
    ({"action": "send", "agent": "echo", "message": "hi", "taskId": "t" + LONE}, "taskId"),
    ({"action": "status", "agent": "echo", "taskId": LONE}, "taskId"),
    ({"action": "cancel", "agent": "echo" + LONE, "taskId": "t-1"}, "agent"),
    ({"action": "send", "agent": "echo", "message": "hi", "files": ["ok.txt", LONE + ".txt"]}, "files"),
    ({"action": LONE}, "action"),
]


async def test_a_lone_surrogate_in_any_member_is_a_400_naming_it(
    host: Host, echo: TestAgent, workspace: Workspace, caplog: pytest.LogCaptureFixture
) -> None:
    """Before: 500 (HTML) for `agent`; 200 "failed unexpectedly (UnicodeEncodeError)" and tracebacks for the rest."""
    before = _snapshot(workspace)
    with caplog.at_level(logging.INFO):
        for body, field in SURROGATES:
            status, answer = await host.call(body)  # json.dumps writes the surrogate as the escape "\ud800"
            assert status == 400, body
            assert answer["field"] == field, answer
            if field != "action":
                assert "lone surrogate" in answer["error"] and "\\ud800" in answer["error"], answer
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert echo.methods == [] and _snapshot(workspace) == before
    assert await TaskEvent.objects.acount() == 0


async def test_a_lone_surrogate_in_a_member_name_is_a_400(host: Host) -> None:
    status, answer = await host.call(b'{"action": "agents", "\\udfff": 1}')
    assert status == 400 and "unknown field" in answer["error"] and answer["field"] == "\\udfff"


async def test_sizes_and_counts_are_capped_per_member(host: Host, echo: TestAgent) -> None:
    base = {"action": "send", "agent": "echo", "message": "hi"}
    for extra, field in (
        ({"agent": "e" * (NAME_MAX_LENGTH + 1)}, "agent"),
        ({"taskId": "t" * 201}, "taskId"),
        ({"files": ["f" * (MAX_PATH + 1)]}, "files"),
        ({"files": ["a.txt", "   "]}, "files"),
        ({"files": [f"f{i}" for i in range(51)]}, "files"),
    ):
        status, answer = await host.call({**base, **extra})
        assert (status, answer["field"]) == (400, field), answer
    assert echo.methods == []


def test_the_body_schema_is_derived_from_the_tool_schema() -> None:
    """One contract: every argument of TOOL_SCHEMA is a checked member, with the host's `hops` beside them."""
    schema = call_schema()
    tool_props = TOOL_SCHEMA["parameters"]["properties"]
    assert set(FIELDS) == set(tool_props) | {"hops"}
    for name, spec in tool_props.items():
        assert schema["properties"][name] == spec, name  # limits included: they are the tool's own
    assert schema["properties"]["action"]["enum"] == tool_props["action"]["enum"]
    assert schema["additionalProperties"] is False


async def test_a_files_only_send_sends_the_files(host: Host, echo: TestAgent, workspace: Workspace) -> None:
    """Before: refused with "message is required", though the schema, openapi.json and docs/tool.md allow it."""
    (workspace.root / "notes.txt").write_text("my notes", encoding="utf-8")
    status, result = await host.call({"action": "send", "agent": "echo", "files": ["notes.txt"]})
    assert status == 200 and result["state"] == "completed", result
    [got] = echo.received
    assert [p.get("filename") for p in got.parts] == ["notes.txt"]  # no text part at all


async def test_a_send_with_neither_message_nor_files_is_a_clear_400(host: Host, echo: TestAgent) -> None:
    for extra in ({}, {"message": ""}, {"message": "  \n"}, {"files": []}, {"message": " ", "files": []}):
        status, answer = await host.call({"action": "send", "agent": "echo", **extra})
        assert status == 400 and answer == {"error": answer["error"], "field": "message"}, extra
        assert answer["error"].startswith("send needs a message, files or data"), answer
    assert echo.methods == []


def test_the_cli_sends_files_only_and_names_the_rule(
    settings: Any, tmp_path: Path, echo: TestAgent, workspace: Workspace
) -> None:
    settings.WORKSPACE_DIR = workspace.root
    (workspace.root / "a.txt").write_text("attached", encoding="utf-8")

    def a2a(*argv: str) -> dict[str, Any]:
        out = io.StringIO()
        call_command("a2a", *argv, stdout=out)
        return json.loads(out.getvalue())

    assert a2a("send", "--agent", "echo", "--file", "a.txt")["state"] == "completed"
    assert [p.get("filename") for p in echo.received[0].parts] == ["a.txt"]
    assert a2a("send", "--agent", "echo") == {"error": "send needs a message, files or data"}


async def test_a_null_member_is_a_400_naming_it(host: Host, echo: TestAgent) -> None:
    """openapi.json gives no member a null type (hops: integer 0..1000). Before: `"hops": null` and the other members'
    nulls were taken as absent, so the call ran (a 200) with the kept hop count: what the schema refuses, answered."""
    base = {"action": "send", "agent": "echo", "message": "hi"}
    for name in ("hops", "contextId", "taskId", "files"):
        status, answer = await host.call({**base, name: None})
        assert (status, answer["field"]) == (400, name), answer
        assert "must not be null" in answer["error"], answer
    status, answer = await host.call({"action": "send", "agent": "echo", "files": ["a.txt"], "message": None})
    assert (status, answer["field"]) == (400, "message"), answer
    assert echo.methods == []


async def test_a_whole_number_written_as_a_float_is_an_integer(host: Host) -> None:
    """JSON has one number type: openapi.json's `integer` takes 2.0 (found by schemathesis). Before: a 400."""
    status, _ = await host.call({"action": "agents", "hops": 2.0})
    assert status == 200
    status, answer = await host.call({"action": "agents", "hops": 2.5})
    assert (status, answer["field"]) == (400, "hops"), answer


@pytest.mark.parametrize(("path", "blank"), [("\x1f", False), ("\x85", False), (" \t", True), ("\u3000", True)])
def test_a_blank_path_is_blank_as_the_schema_reads_it(path: str, blank: bool) -> None:
    """Schemathesis found it: `\\S` in openapi.json is ECMA-262's, and Python's strip took U+001F for white space,
    so a path the published schema allows was refused as blank."""
    assert (SCHEMA_NOT_BLANK.search(path) is None) is blank


async def test_a_name_the_schema_allows_is_not_refused_as_empty(host: Host) -> None:
    """The same for a required name: U+001F is no white space to openapi.json, so the call gets the tool's
    answer (no such agent), not a 400 saying the name is empty."""
    status, body = await host.call({"action": "status", "agent": "\x1f", "taskId": "t-1"})
    assert status != 400 and "must not be empty" not in json.dumps(body)
