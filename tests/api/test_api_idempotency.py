"""`Idempotency-Key` on the tool: a host's retry gets the first answer, and the agent gets one task, not two."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import ApplicationCommunicator
from django.utils import timezone

from a2aconsole.api.idempotency import IN_FLIGHT_LIMIT, KEEP, body_hash
from a2aconsole.api.models import IdempotentCall
from a2aconsole.api.openapi import TOOL_PATH
from a2aconsole.asgi import application
from a2aconsole.web.models import ApiToken
from tests.support.agents import TestAgent
from tests.support.api_contract import check_answer, document
from tests.support.api_host import Host
from tests.support.watching import eventually

pytestmark = pytest.mark.django_db(transaction=True)

SEND = {"action": "send", "agent": "echo", "message": "hello, book the train"}


async def post(host: Host, body: bytes | dict[str, Any], key: str | None, token: str | None = None) -> Any:
    """The raw answer (bytes and headers matter here), checked against openapi.json."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {"Authorization": f"Bearer {token or host.token}"}
    if key is not None:
        headers["Idempotency-Key"] = key
    resp = await host.client.post(
        f"/api/v1/targets/{host.target.id}/tool", raw, content_type="application/json", headers=headers
    )
    check_answer(TOOL_PATH, "POST", resp.status_code, resp["Content-Type"], resp.content)
    return resp


def sends(agent: TestAgent) -> int:
    return agent.methods.count("SendMessage")


async def test_the_same_key_and_body_twice_is_one_task_and_the_same_answer(host: Host, echo: TestAgent) -> None:
    """Before: each retry started a task of its own (a second booking)."""
    first = await post(host, SEND, "booking-1")
    again = await post(host, json.dumps(SEND, indent=2).encode(), "booking-1")  # the same call, other whitespace
    assert first.status_code == again.status_code == 200
    assert again.content == first.content and json.loads(first.content)["state"] == "completed"
    assert again["Idempotent-Replayed"] == "true" and not first.has_header("Idempotent-Replayed")
    assert sends(echo) == 1 and len(echo.received) == 1
    row = await IdempotentCall.objects.aget(key="booking-1")
    assert bytes(row.answer) == first.content and row.status == 200 and row.body_hash == body_hash(SEND)


async def test_without_a_key_or_with_another_key_each_call_sends(host: Host, echo: TestAgent) -> None:
    await post(host, SEND, None)
    await post(host, SEND, None)
    await post(host, SEND, "a")
    await post(host, SEND, "b")
    assert sends(echo) == 4


async def test_the_same_key_with_another_body_is_a_422(host: Host, echo: TestAgent) -> None:
    await post(host, SEND, "k")
    resp = await post(host, {**SEND, "message": "hello, book the plane"}, "k")
    answer = json.loads(resp.content)
    assert resp.status_code == 422 and answer["field"] == "Idempotency-Key" and "different" in answer["error"]
    assert sends(echo) == 1


async def test_a_key_belongs_to_its_token(host: Host, echo: TestAgent) -> None:
    _, second_token = await sync_to_async(ApiToken.issue)(host.target, "second host")
    one = await post(host, SEND, "shared")
    two = await post(host, SEND, "shared", token=second_token)
    assert one.status_code == two.status_code == 200 and sends(echo) == 2


async def test_a_bad_key_is_a_400_and_sends_nothing(host: Host, echo: TestAgent) -> None:
    for key in ("x" * 256, "tab\there", "caf\u00e9"):
        resp = await post(host, SEND, key)
        assert resp.status_code == 400 and json.loads(resp.content)["field"] == "Idempotency-Key", key
    assert echo.methods == [] and await IdempotentCall.objects.acount() == 0


async def test_a_call_in_flight_elsewhere_is_a_409_and_an_abandoned_one_says_so(host: Host, echo: TestAgent) -> None:
    """Another process holds the key (its row has no answer yet): retry shortly; long unanswered: it never will be."""
    token = await ApiToken.objects.aget(target=host.target)
    await IdempotentCall.objects.acreate(token=token, key="busy", body_hash=body_hash(SEND))
    resp = await post(host, SEND, "busy")
    assert resp.status_code == 409 and resp["Retry-After"] == "1" and "in progress" in json.loads(resp.content)["error"]
    old = timezone.now() - IN_FLIGHT_LIMIT - timedelta(seconds=1)
    await IdempotentCall.objects.filter(key="busy").aupdate(created_at=old)
    resp = await post(host, SEND, "busy")
    assert resp.status_code == 409 and "never answered" in json.loads(resp.content)["error"]
    assert echo.methods == []


async def test_a_key_expires_after_24_hours(host: Host, echo: TestAgent) -> None:
    first = await post(host, SEND, "daily")
    await IdempotentCall.objects.filter(key="daily").aupdate(created_at=timezone.now() - KEEP - timedelta(seconds=1))
    again = await post(host, SEND, "daily")
    assert again.status_code == 200 and not again.has_header("Idempotent-Replayed")
    assert sends(echo) == 2 and json.loads(again.content)["taskId"] != json.loads(first.content)["taskId"]
    assert await IdempotentCall.objects.acount() == 1  # the expired row was cleaned up by the new call


async def test_a_retry_after_a_dropped_connection_gets_the_first_calls_answer(host: Host, echo: TestAgent) -> None:
    """The host hangs up while the agent works (Django cancels the view); the call goes on, and the retry,
    arriving while it still runs, waits for it and gets its answer. One task at the agent."""
    body = json.dumps({"action": "send", "agent": "echo", "message": "hold trip"}).encode()
    headers = [
        (b"host", b"testserver"),
        (b"content-type", b"application/json"),
        (b"authorization", f"Bearer {host.token}".encode()),
        (b"idempotency-key", b"trip-1"),
    ]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/api/v1/targets/bot/tool",
        "raw_path": b"/api/v1/targets/bot/tool",
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }
    dropped = ApplicationCommunicator(application, scope)
    await dropped.send_input({"type": "http.request", "body": body, "more_body": False})
    await eventually(lambda: len(echo.received) == 1)
    await dropped.send_input({"type": "http.disconnect"})
    await dropped.wait(timeout=10)  # the view was cancelled and the request is over; the call is not

    retry = asyncio.ensure_future(post(host, body, "trip-1"))
    await eventually(lambda: echo.methods.count("GetTask") >= 1)  # the first call is still waiting on the task
    assert not retry.done()
    echo.release("trip")
    resp = await asyncio.wait_for(retry, 20)
    answer = json.loads(resp.content)
    assert resp.status_code == 200 and answer["state"] == "completed" and answer["text"] == "released trip"
    assert resp["Idempotent-Replayed"] == "true"
    assert sends(echo) == 1 and len(echo.received) == 1
    row = await IdempotentCall.objects.aget(key="trip-1")
    assert bytes(row.answer) == resp.content
    later = await post(host, body, "trip-1")
    assert later.content == resp.content and sends(echo) == 1


def test_openapi_documents_the_header_and_its_answers() -> None:
    op = document()["paths"][TOOL_PATH]["post"]
    [header] = [p for p in op["parameters"] if p["in"] == "header"]
    assert header["name"] == "Idempotency-Key" and header["schema"]["maxLength"] == 255
    assert {"409", "422"} <= set(op["responses"])
    assert "Idempotent-Replayed" in op["responses"]["200"]["headers"]
