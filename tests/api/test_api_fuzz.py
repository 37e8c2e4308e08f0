"""Property-based fuzzing of the tool API (hypothesis): whatever a host sends, the answer is JSON, never a 5xx,
and a refused call changes nothing in the workspace.

Bodies are arbitrary JSON (lone surrogates, control characters, wrong types, deep and wide values), tool calls
with each member bent, raw bytes; with odd content types, tokens, keys, methods and target ids. The agent in
`agents.json` is a real address with nobody listening, so even a valid call is refused by the network and
nothing may change on disk; every answer is also held to openapi.json (status listed, body valid).
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from a2aconsole.api.calls import FIELDS, BadCall, call_schema, parse_call
from a2aconsole.api.openapi import TOOL_PATH
from a2aconsole.core import pending
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.records import WatchRecord
from tests.support.api_contract import check_answer, check_error
from tests.support.api_host import Host, make_host
from tests.support.runtime import fresh_runtime

pytestmark = pytest.mark.django_db(transaction=True)

FUZZ = settings(
    max_examples=200,
    deadline=None,
    database=None,  # no .hypothesis example folder in the repo
    derandomize=True,  # the same examples on every run: CI stays green or red for a reason
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

TOOL_CALL = Draft202012Validator(call_schema())
# any code point, lone surrogates and control characters included
ANY_TEXT = st.text(st.characters(codec=None, categories=None), max_size=40)
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | ANY_TEXT
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(ANY_TEXT, inner, max_size=6),
    max_leaves=30,
)
# one member of a call: a plausible value or anything at all
MEMBER_VALUES = st.one_of(
    st.sampled_from(["agents", "send", "status", "cancel", "echo", "", " ", "t-1", "\ud800", "a\x00b", "x" * 300]),
    st.lists(st.sampled_from(["notes.txt", "../x", "\udfff", "", ".volcanic/a2a/agents.json"]), max_size=4),
    st.integers(-5, 2000),
    JSON_VALUES,
)
VALID_CALLS = st.sampled_from(
    [
        {"action": "agents"},
        {"action": "send", "agent": "echo", "message": "hi", "hops": 1},
        {"action": "send", "agent": "echo", "files": ["notes.txt"]},
        {"action": "status", "agent": "echo", "taskId": "t-1"},
        {"action": "cancel", "agent": "echo", "taskId": "t-1"},
    ]
)
# a valid call with one or two members bent, or members drawn at random
CALLS = st.one_of(
    st.tuples(VALID_CALLS, st.sampled_from([*FIELDS, "extra", "\ud800"]), MEMBER_VALUES).map(
        lambda t: {**t[0], t[1]: t[2]}
    ),
    st.tuples(VALID_CALLS, st.dictionaries(st.sampled_from(FIELDS), MEMBER_VALUES, max_size=2)).map(
        lambda t: {**t[0], **t[1]}
    ),
    st.dictionaries(st.sampled_from([*FIELDS, "extra"]), MEMBER_VALUES, max_size=len(FIELDS)),
)
BODIES = st.one_of(
    CALLS.map(lambda d: json.dumps(d).encode()),  # json.dumps writes surrogates as "\ud800" escapes
    CALLS.map(lambda d: json.dumps(d).encode()),
    JSON_VALUES.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=200),
    st.integers(1, 3000).map(lambda n: b"[" * n + b"]" * n),  # deep nesting
    st.just(json.dumps({"action": "send", "agent": "echo", "message": "m" * 1_000_001}).encode()),
)
CONTENT_TYPES = st.one_of(
    st.sampled_from(
        ["application/json", "", "text/plain", "application/x-www-form-urlencoded", "application/problem+json"]
    ),
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=30),
)
HEADER_TEXT = st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF), max_size=60)  # what HTTP can carry


def _auth(good: str) -> st.SearchStrategy[str | None]:
    return st.one_of(
        st.just(f"Bearer {good}"),
        st.just(f"Bearer {good}"),
        st.none(),
        st.just(good),
        HEADER_TEXT.map(lambda t: "Bearer " + t),
        HEADER_TEXT,
    )


def _snapshot(workspace: Workspace) -> dict[str, bytes]:
    return {str(p.relative_to(workspace.root)): p.read_bytes() for p in workspace.root.rglob("*") if p.is_file()}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
async def host(workspace: Workspace) -> AsyncIterator[Host]:
    """A host of target `bot`, whose one agent is a real address with nobody listening."""
    workspace.save_agents([{"name": "echo", "url": f"http://127.0.0.1:{_closed_port()}/"}], None)
    (workspace.root / "notes.txt").write_text("notes", encoding="utf-8")
    async with pending.transaction(workspace) as tx:
        tx.add(WatchRecord(watch_id="w1", target="another-chat", agent="echo", task_id="t-1"))
    async with fresh_runtime():
        yield await make_host(workspace)


async def _request(
    host: Host, method: str, target: str, body: bytes, content_type: str, headers: dict[str, str]
) -> None:
    """One request: below 500, JSON, documented for the operation (404: the error shape), nothing changed."""
    workspace = Workspace(host.target.workspace)
    before = _snapshot(workspace)
    path = f"/api/v1/targets/{quote(target.encode('utf-8', 'surrogatepass'), safe='')}/tool"
    resp = await host.client.generic(method, path, body, content_type=content_type, headers=headers)
    assert resp.status_code < 500, (resp.status_code, resp.content[:300])
    if resp.status_code == 404:  # a target id with a slash in it is no route: the API's JSON 404
        check_error(404, resp["Content-Type"], resp.content)
    else:
        check_answer(TOOL_PATH, "POST", resp.status_code, resp["Content-Type"], resp.content)
    assert _snapshot(workspace) == before


@FUZZ
@given(body=BODIES, key=st.none() | st.none() | HEADER_TEXT)
async def test_any_body_from_a_real_host_gets_json_below_500_and_changes_nothing(
    host: Host, body: bytes, key: str | None
) -> None:
    """The host is who it says (its token, its target, JSON): the body and the key are what vary."""
    headers = {"Authorization": f"Bearer {host.token}"}
    if key is not None:
        headers["Idempotency-Key"] = key
    await _request(host, "POST", host.target.id, body, "application/json", headers)


@settings(FUZZ, max_examples=100)
@given(
    body=BODIES,
    content_type=CONTENT_TYPES,
    auth=st.data(),
    method=st.sampled_from(["POST", "POST", "GET", "PUT", "DELETE", "PATCH"]),
    target=st.sampled_from(["bot", "bot", "nope"]) | ANY_TEXT,
)
async def test_any_request_gets_json_below_500_and_changes_nothing(
    host: Host, body: bytes, content_type: str, auth: Any, method: str, target: str
) -> None:
    """Anyone at all: other methods, content types, tokens and target ids too."""
    headers: dict[str, str] = {}
    if (authorization := auth.draw(_auth(host.token))) is not None:
        headers["Authorization"] = authorization
    await _request(host, method, target, body, content_type, headers)


def _has_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(_has_float(v) for v in value.values())
    return isinstance(value, list) and any(_has_float(v) for v in value)


@settings(FUZZ, max_examples=300)
@given(data=CALLS)
def test_the_parser_and_the_published_schema_agree(data: dict[str, Any]) -> None:
    """What parse_call takes is valid under openapi.json's ToolCall, and what that schema refuses parse_call
    refuses too (JSON Schema has no word for a lone surrogate, nor for 2.0 not being an integer to Python)."""
    try:
        parse_call(data)
        accepted = True
    except BadCall:
        accepted = False
    documented = TOOL_CALL.is_valid(data)  # null is no member's type: refused by both
    if accepted:
        assert documented, data
    elif documented and not _has_float(data):
        assert any(_is_surrogate(s) for s in _strings(data)), data


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    return [s for v in value for s in _strings(v)] if isinstance(value, list) else []


def _is_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)
