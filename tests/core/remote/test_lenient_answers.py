"""Answers the SDK's strict parse refuses, read leniently where the meaning is clear (issue 26, item 1): the parse
itself, then a real `fasta2a` agent (its stock storage writes timestamps without a time zone) over a connection:
a send, a task, a stream; and the same over HTTP+JSON (a scripted agent: fasta2a serves JSON-RPC only)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from a2a.types import SendMessageResponse, StreamResponse, Task, TaskState
from a2a.utils.proto_utils import parse_lenient
from google.protobuf.json_format import ParseError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from a2aconsole.core.files import AgentEntry
from a2aconsole.core.remote import OutgoingMessage, Remote, StatusUpdate, TaskSnapshot, lenient
from a2aconsole.core.remote.convert import event_value, task_json, task_snapshot
from a2aconsole.core.remote.lenient import parse_answer, utc_timestamp
from tests.core.remote.test_client_misbehaving import Misbehaving
from tests.support.agents import TestAgent
from tests.support.fasta2a_agents import Fasta2aAgent

NAIVE = "2026-12-04T20:59:14.363182"


def test_a_timestamp_without_zone_is_utc() -> None:
    assert utc_timestamp(NAIVE) == "2026-12-04T20:59:14.363182Z"
    assert utc_timestamp("2026-12-04T22:59:14+02:00") == "2026-12-04T20:59:14Z"
    assert utc_timestamp("yesterday") is None


def test_an_answer_the_strict_parse_refuses_is_mended() -> None:
    answer = {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING", "timestamp": NAIVE}}
    with pytest.raises(ParseError):
        parse_lenient(answer, Task())  # the SDK's own parse
    task = parse_answer(answer, Task())
    assert task.status.state == TaskState.TASK_STATE_WORKING
    assert task.status.timestamp.ToDatetime(UTC) == datetime(2026, 12, 4, 20, 59, 14, 363182, tzinfo=UTC)


def test_mended_where_clear_left_out_where_not() -> None:
    """No time at all: the status is kept without it. A 0.3 state or role is its 1.0 name; an application's
    data and metadata are its own, left as they are."""
    answer = {
        "task": {
            "id": "t1",
            "status": {"state": "input-required", "timestamp": "soon"},
            "history": [{"messageId": "m", "role": "agent", "parts": [{"data": {"state": "x", "timestamp": "y"}}]}],
            "metadata": {"timestamp": "not mine"},
        }
    }
    reply = parse_answer(answer, StreamResponse())
    task = reply.task
    assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED and not task.status.HasField("timestamp")
    assert task.history[0].role == 2 and dict(task.history[0].parts[0].data.struct_value) == {
        "state": "x",
        "timestamp": "y",
    }
    assert dict(task.metadata) == {"timestamp": "not mine"}


def test_the_strict_parse_comes_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """An answer the SDK reads is never mended (nor copied)."""

    def refuse(answer: object) -> object:
        raise AssertionError("mended an answer the strict parse reads")

    monkeypatch.setattr(lenient, "mended", refuse)
    task = parse_answer({"id": "t1", "status": {"state": "working", "timestamp": "2026-12-04T20:59:14Z"}}, Task())
    assert task.id == "t1" and task.status.state == TaskState.TASK_STATE_UNSPECIFIED  # a 0.3 name: no 1.0 enum
    assert task_snapshot(task).state == "working"  # ... kept as text, which is the console's own word for it


def test_a_refused_answer_the_mending_cannot_save_raises_the_strict_error() -> None:
    with pytest.raises(ParseError, match="status"):
        parse_answer({"id": "t1", "status": {"state": "TASK_STATE_WORKING", "timestamp": 7}}, Task())


@pytest.fixture
def fa_entry(fasta2a_agent: Fasta2aAgent) -> AgentEntry:
    return AgentEntry(name="fa", url=fasta2a_agent.url)


def _message(text: str) -> OutgoingMessage:
    return OutgoingMessage(text, (), "", "", {})


async def test_fasta2a_send_task_and_stream(remote: Remote, fa_entry: AgentEntry, fasta2a_agent: Fasta2aAgent) -> None:
    conn = await remote.connect(fa_entry)
    before = datetime.now(UTC)
    reply = await conn.send(_message("hold g1"))
    assert isinstance(reply, TaskSnapshot) and reply.state == "submitted"
    stored = fasta2a_agent.storage.tasks[reply.id]["status"]["timestamp"]
    assert datetime.fromisoformat(stored).tzinfo is None  # the stock storage's time, without a zone
    assert reply.status.stamp is not None  # read as UTC (the machine's zone, as fasta2a's is)
    sent_at = datetime.fromtimestamp(reply.status.stamp[0], UTC)
    assert before.replace(microsecond=0) <= sent_at <= datetime.now(UTC)
    events = conn.subscribe(reply.id)
    first = await anext(events)
    assert isinstance(first, TaskSnapshot) and first.id == reply.id
    fasta2a_agent.release("g1")
    states = [first.state]
    async for ev in events:
        if isinstance(ev, StatusUpdate):
            states.append(ev.status.state)
    assert states[-1] == "completed", states
    task = await conn.get_task(reply.id)
    assert task.state == "completed" and task.status.stamp is not None


def test_an_unknown_task_state_is_kept_as_text() -> None:
    """A state no 1.0 enum names is not a failure, and not "unknown" either: the agent's word, as the console
    writes states; whether the strict parse read the answer (it ignores the value) or the mended one did."""
    strict = parse_answer({"id": "t1", "status": {"state": "TASK_STATE_PAUSED"}}, Task())
    assert task_snapshot(strict).state == "paused"
    mended = parse_answer({"id": "t1", "status": {"state": "On-Hold", "timestamp": NAIVE}}, Task())
    assert task_snapshot(mended).state == "on-hold" and mended.status.HasField("timestamp")
    event = parse_answer({"statusUpdate": {"taskId": "t1", "status": {"state": "TASK_STATE_PAUSED"}}}, StreamResponse())
    update = event_value(event)
    assert isinstance(update, StatusUpdate) and update.status.state == "paused"
    sent = parse_answer({"task": {"id": "t1", "status": {"state": "queued"}}}, SendMessageResponse())
    assert task_snapshot(sent.task).state == "queued"
    # what the console shows of the task's JSON is the agent's own: no word of the console's in it
    assert task_json(strict) == {"id": "t1", "status": {}}
    unspecified = parse_answer({"id": "t2", "status": {"state": "TASK_STATE_UNSPECIFIED"}}, Task())
    assert task_snapshot(unspecified).state == "unknown"


@pytest.fixture
def rest_agent() -> Iterator[Misbehaving]:
    """A scripted HTTP+JSON agent whose answers carry timestamps without a zone, as fasta2a's storage writes them:
    a send, a task, a stream."""
    server = Misbehaving().start()
    card = {
        "name": "rest",
        "description": "naive times over REST",
        "version": "1",
        "supportedInterfaces": [{"url": server.url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
    }

    def task(state: str) -> dict[str, Any]:
        return {"id": "t1", "contextId": "c1", "status": {"state": state, "timestamp": NAIVE}}

    def stream(request: Request) -> Response:
        events = [
            {"task": task("TASK_STATE_WORKING")},
            {"statusUpdate": {**task("TASK_STATE_COMPLETED"), "taskId": "t1"}},
        ]
        body = "".join(f"data: {json.dumps(e)}\n\n" for e in events)
        return Response(body, media_type="text/event-stream")

    server.routes["/.well-known/agent-card.json"] = lambda r: JSONResponse(card)
    server.routes["/message:send"] = lambda r: JSONResponse({"task": task("TASK_STATE_SUBMITTED")})
    server.routes["/tasks/t1"] = lambda r: JSONResponse(task("TASK_STATE_COMPLETED"))
    server.routes["/tasks/t1:subscribe"] = stream
    yield server
    server.stop()


async def test_an_http_json_agent_s_answers_are_mended_too(remote: Remote, rest_agent: Misbehaving) -> None:
    conn = await remote.connect(AgentEntry(name="rest", url=rest_agent.url))
    at = (int(datetime(2026, 12, 4, 20, 59, 14, tzinfo=UTC).timestamp()), 363182000)
    reply = await conn.send(_message("hi"))
    assert isinstance(reply, TaskSnapshot) and reply.state == "submitted" and reply.status.stamp == at
    task = await conn.get_task("t1")
    assert task.state == "completed" and task.status.stamp == at
    states = [ev.state if isinstance(ev, TaskSnapshot) else ev.status.state async for ev in conn.subscribe("t1")]
    assert states == ["working", "completed"]
    assert [path for _, path, _ in rest_agent.hits] == [
        "/.well-known/agent-card.json",
        "/message:send",
        "/tasks/t1",
        "/tasks/t1:subscribe",
    ]


async def test_an_unknown_state_over_the_wire_is_kept_as_text(remote: Remote, rest_agent: Misbehaving) -> None:
    """As the SDK reads the answer (nothing to mend) and as the lenient parse does, on a call and a stream."""
    task = {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_PAUSED"}}
    rest_agent.routes["/tasks/t1"] = lambda r: JSONResponse(task)
    rest_agent.routes["/message:send"] = lambda r: JSONResponse({"task": {**task, "status": {"state": "queued"}}})
    conn = await remote.connect(AgentEntry(name="rest", url=rest_agent.url))
    assert (await conn.get_task("t1")).state == "paused"
    reply = await conn.send(_message("hi"))
    assert isinstance(reply, TaskSnapshot) and reply.state == "queued"
    assert "metadata" not in await conn.get_task_json("t1")  # the raw task shows nothing the agent did not say


@pytest.mark.parametrize("legacy", [False, True], ids=["protocol-1.0", "protocol-0.3"])
async def test_an_sdk_agent_writing_times_without_zone(
    remote: Remote, make_agent: Callable[..., TestAgent], legacy: bool
) -> None:
    """A real a2a-sdk agent whose answers lose their zones on the way (`naive_times`), on protocol 1.0 and on 0.3
    (older fasta2a and pydantic-ai agents speak 0.3 with the same storage), over a send, a stream and a task."""
    agent = make_agent(naive_times=True, legacy=legacy)
    conn = await remote.connect(AgentEntry(name="naive", url=agent.url))
    reply = await conn.send(_message("hold g1"))
    assert isinstance(reply, TaskSnapshot)
    events = conn.subscribe(reply.id)
    first = await anext(events)
    assert isinstance(first, TaskSnapshot) and first.status.stamp is not None
    agent.release("g1")
    last = [ev async for ev in events][-1]
    assert isinstance(last, StatusUpdate) and last.status.state == "completed" and last.status.stamp is not None
    task = await conn.get_task(reply.id)
    assert task.state == "completed" and task.status.stamp is not None
