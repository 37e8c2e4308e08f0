"""The webhook backend against a real loopback host, checked by a reference verifier like docs/api.md's."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime

import httpx
import pytest

from a2aconsole.core import pending
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.pending.records import WatchRecord
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.watches.registry import WatchRegistry
from a2aconsole.web.delivery.webhook import WebhookBackend, new_secret
from a2aconsole.web.models import ChatTarget
from tests.support.chats import BackendDelivery, kept
from tests.support.clock import FakeClock
from tests.support.hosts import LoopbackHost
from tests.support.watching import SignalClock, WaitableSink

SECRET = new_secret()


class ReferenceVerifier:
    """What an agent host does with each POST: check the signature and the timestamp's age, refuse replays."""

    def __init__(self, secret: str, now: float, tolerance: float = 300) -> None:
        self.secret, self.now, self.tolerance = secret, now, tolerance
        self.seen: set[str] = set()

    def accept(self, headers: dict[str, str], body: bytes) -> bool:
        timestamp = headers.get("x-a2aconsole-timestamp", "")
        signature = headers.get("x-a2aconsole-signature", "")
        expected = (
            "sha256=" + hmac.new(self.secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
        )
        if not timestamp.isdigit() or not hmac.compare_digest(signature, expected):
            return False
        if abs(self.now - int(timestamp)) > self.tolerance:
            return False  # too old (or from the future): a replay of a captured request
        if signature in self.seen:
            return False  # the same request again
        self.seen.add(signature)
        return True


@pytest.fixture
def host() -> Iterator[LoopbackHost]:
    h = LoopbackHost().start()
    yield h
    h.stop()


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


NOW = datetime(2026, 12, 2, 10, 14, 30, tzinfo=UTC)


def hook_target(host: LoopbackHost, secret: str = SECRET) -> ChatTarget:
    return ChatTarget(
        id="bot",
        name="Bot host",
        workspace="/tmp/x",
        backend="webhook",
        backend_settings={"url": host.url + "/a2a/results?k=1", "secret": secret},
    )


def record() -> WatchRecord:
    return WatchRecord(
        watch_id="w-42", target="bot", agent="travel-bot", task_id="t1", context_id="c1", state="completed"
    )


async def test_signed_post_verifies_and_a_replay_is_refused(host, http) -> None:
    backend = WebhookBackend(http, FakeClock(NOW))
    assert await backend.deliver(hook_target(host), "the result", record())

    [hit] = host.hits
    assert hit.path == "/a2a/results" and hit.headers["idempotency-key"] == "w-42"
    assert hit.json() == {
        "target": "bot",
        "watchId": "w-42",
        "agent": "travel-bot",
        "taskId": "t1",
        "contextId": "c1",
        "state": "completed",
        "text": "the result",
        "deliveredAt": NOW.isoformat(),
    }
    verifier = ReferenceVerifier(SECRET, NOW.timestamp())
    assert verifier.accept(hit.headers, hit.body)
    assert not verifier.accept(hit.headers, hit.body)  # replayed as is
    assert not ReferenceVerifier(SECRET, NOW.timestamp() + 3600).accept(hit.headers, hit.body)  # replayed later
    assert not ReferenceVerifier(SECRET, NOW.timestamp()).accept(hit.headers, hit.body.replace(b"the", b"an"))
    assert not ReferenceVerifier(new_secret(), NOW.timestamp()).accept(hit.headers, hit.body)
    assert SECRET not in repr(hit.headers) + hit.body.decode()


async def test_500_then_200_delivers_once_more_and_no_more(host, http, workspace) -> None:
    clock = SignalClock()
    async with pending.transaction(workspace) as tx:
        tx.add(kept("w-42", "bot", "the result"))
    host.script = [(500, {"error": "busy"})]
    delivery = BackendDelivery({"bot": (hook_target(host), WebhookBackend(http, clock))})
    sink = WaitableSink()
    registry = WatchRegistry(Remote(http, 5.0, 5.0), ClientSettings(), delivery, clock, sink)
    try:
        await registry.start([workspace])
        await clock.until(lambda sleeps: sleeps == [30.0])  # kept, a retry waits
        assert [h.status for h in host.hits] == [500]
        await clock.advance(30)
        await sink.until(lambda: "delivered" in sink.kinds())
        delivered_at = clock.now().timestamp()
        await clock.advance(3600)
        assert [h.status for h in host.hits] == [500, 200]  # once more, and no more
        assert {h.headers["idempotency-key"] for h in host.hits} == {"w-42"}
        assert pending.read(workspace).records == []
        verifier = ReferenceVerifier(SECRET, delivered_at)
        assert verifier.accept(host.hits[1].headers, host.hits[1].body)
        assert host.hits[1].json()["text"] == "the result"
    finally:
        await registry.stop()


async def test_unreachable_or_misconfigured_host_keeps_the_result(host, http, caplog) -> None:
    backend = WebhookBackend(http, FakeClock(NOW))
    down = ChatTarget(id="bot", backend="webhook", backend_settings={"url": "http://127.0.0.1:9/x", "secret": SECRET})
    assert not await backend.deliver(down, "r", record())
    assert not await backend.deliver(hook_target(host, secret=""), "r", record())
    host.script = [(302, {})]
    assert not await backend.deliver(hook_target(host), "r", record())
    assert SECRET not in caplog.text and "k=1" not in caplog.text
