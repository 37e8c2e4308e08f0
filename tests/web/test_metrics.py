"""`/metrics`: off unless configured, a token or an address list, never behind the login, never a key; and the
named families move where things happen (a watch armed, a push received, a result delivered, a tab open)."""

from __future__ import annotations

import ipaddress
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from django.test import Client, override_settings
from prometheus_client.parser import text_string_to_metric_families

from a2aconsole.asgi import application
from a2aconsole.core import pending
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.metrics import REGISTRY
from a2aconsole.core.metrics_access import MetricsAccess
from a2aconsole.core.pending.records import WatchRecord
from a2aconsole.web.broadcast import ChannelsBroadcast
from a2aconsole.web.delivery.targets import TargetDelivery
from a2aconsole.web.models import ChatTarget
from a2aconsole.web.process.runtime import build_runtime, close_runtime, install_runtime
from tests.support.console import connect_socket
from tests.support.watching import LoopbackServer, SignalClock, WaitableSink, add_record, eventually, start_task

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "metrics-test-token-5f0c2a9d"
AGENT_KEY = "agent-key-9b1e77c4d2"

FAMILIES = (
    "a2aconsole_watches",
    "a2aconsole_deliveries",
    "a2aconsole_delivery_retries",
    "a2aconsole_push_receipts",
    "a2aconsole_remote_call_seconds",
    "a2aconsole_websocket_clients",
    "a2aconsole_worker_lease_held",
)


def value(text: str, sample: str, **labels: str) -> float:
    """One sample's value in an exposition text (0 when absent)."""
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == sample and all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    return 0.0


@pytest.fixture
def token_access() -> Iterator[None]:
    with override_settings(A2A_METRICS=MetricsAccess(token=TOKEN)):
        yield


@override_settings(A2A_METRICS=MetricsAccess())
def test_off_by_default_answers_404_not_the_login_page() -> None:
    r = Client().get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 404
    assert b"a2aconsole_" not in r.content


def test_token_refused_without_and_when_wrong(token_access: None) -> None:
    c = Client()
    missing = c.get("/metrics")
    assert missing.status_code == 401 and missing["WWW-Authenticate"].startswith("Bearer")
    assert c.get("/metrics", headers={"Authorization": "Bearer " + TOKEN[:-1]}).status_code == 401
    assert c.get("/metrics", headers={"Authorization": f"Basic {TOKEN}"}).status_code == 401
    ok = c.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, HTTP_HOST="10.0.0.9:8000")  # by IP
    assert ok.status_code == 200
    assert ok["Content-Type"].startswith("text/plain; version=")
    assert "a2aconsole_remote_call_seconds" in ok.content.decode()
    assert TOKEN not in ok.content.decode()


@override_settings(A2A_METRICS=MetricsAccess(networks=(ipaddress.ip_network("10.0.0.0/8"),)))
def test_address_list() -> None:
    assert Client(REMOTE_ADDR="192.168.3.4").get("/metrics").status_code == 403
    assert Client(REMOTE_ADDR="10.20.30.40").get("/metrics").status_code == 200


def test_a_short_token_stops_start_up_without_showing_it(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("A2ACONSOLE_")}
    env.update(A2ACONSOLE_DATA=str(tmp_path), A2ACONSOLE_WORKSPACE=str(tmp_path / "ws"))
    env["A2ACONSOLE_METRICS_TOKEN"] = "tiny-secret"
    run = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert run.returncode == 2
    assert run.stderr.startswith("a2aconsole: configuration error: A2ACONSOLE_METRICS_TOKEN: expected")
    assert "tiny-secret" not in run.stderr and len(run.stderr.splitlines()) == 1


@pytest.mark.django_db(transaction=True)
async def test_retries_counted_by_backend() -> None:
    class Flaky:
        def __init__(self) -> None:
            self.answers = [False, True]

        async def deliver(self, target: ChatTarget, text: str, record: WatchRecord | None) -> bool:
            return self.answers.pop(0)

    await ChatTarget.objects.acreate(id="flakychat", name="Flaky", workspace="/tmp/flaky", backend="flaky")
    delivery = TargetDelivery({"flaky": Flaky()})
    rec = WatchRecord("w-retry", "flakychat", "bot", "t-1", "c-1", started_at="2026-01-01T00:00:00Z")

    def sample(name: str, **labels: str) -> float:
        return REGISTRY.get_sample_value(name, {"backend": "flaky", **labels}) or 0.0

    before = (sample("a2aconsole_delivery_retries_total"), sample("a2aconsole_deliveries_total", outcome="failed"))
    assert not await delivery.deliver("flakychat", "text", rec)
    assert sample("a2aconsole_deliveries_total", outcome="failed") == before[1] + 1
    assert sample("a2aconsole_delivery_retries_total") == before[0]
    assert await delivery.deliver("flakychat", "text", rec)
    assert sample("a2aconsole_delivery_retries_total") == before[0] + 1


@pytest.fixture
async def server() -> AsyncIterator[LoopbackServer]:
    async with LoopbackServer(application) as s:
        yield s


@pytest.mark.django_db(transaction=True)
async def test_families_follow_a_push_watch_and_never_show_a_key(
    make_agent, workspace, server, token_access, owner_cookie
) -> None:
    agent = make_agent(streaming=False, key=AGENT_KEY)
    workspace.save_agents([{"name": "bot", "url": agent.url, "key": AGENT_KEY}], None)
    await ChatTarget.objects.acreate(id="chat1", name="Chat", workspace=str(workspace.root), backend="web")
    clock = SignalClock()
    sink = WaitableSink(ChannelsBroadcast())
    rt = install_runtime(
        build_runtime(client_settings=ClientSettings(push_base_url=server.url), clock=clock, events=sink)
    )
    try:
        await rt.start_registry([workspace])
        task = await start_task(rt.remote, workspace, "bot", "hold m")
        rec = await add_record(workspace, task, "bot", clock)
        await rt.registry.arm(workspace, rec)
        await eventually(lambda: "GetTask" in agent.methods, what="the first check")
        (armed_record,) = pending.read(workspace).records
        push_token = armed_record.push_token
        assert push_token
        async with httpx.AsyncClient(timeout=30) as http:

            async def scrape() -> str:
                r = await http.get(f"{server.url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
                assert r.status_code == 200
                return r.text

            comm, connected = await connect_socket("/ws/console/watches/", owner_cookie)
            assert connected
            await comm.receive_from(timeout=5)
            armed = await scrape()
            await comm.disconnect()
            closed = await scrape()
            before = armed

            (row,) = rt.registry.snapshot()
            assert value(armed, "a2aconsole_watches", source=row["source"]) == 1
            assert row["source"] == "push"
            assert value(armed, "a2aconsole_worker_lease_held", workspace=str(workspace.root)) == 1
            assert value(armed, "a2aconsole_remote_call_seconds_count", agent="bot", method="send") >= 1
            assert value(armed, "a2aconsole_remote_call_seconds_count", agent="bot", method="push setup") >= 1
            assert value(armed, "a2aconsole_websocket_clients", page="watches") >= 1
            assert (
                value(closed, "a2aconsole_websocket_clients", page="watches")
                == value(armed, "a2aconsole_websocket_clients", page="watches") - 1
            )

            agent.release("m")  # the agent pushes the completion to /a2a/push/<watchId>
            await sink.until(lambda: "delivered" in sink.kinds(), what="the result to be delivered")
            after = await scrape()
    finally:
        await close_runtime()

    assert (
        value(after, "a2aconsole_push_receipts_total", answer="200")
        >= value(before, "a2aconsole_push_receipts_total", answer="200") + 1
    )
    assert (
        value(after, "a2aconsole_deliveries_total", backend="web", outcome="delivered")
        >= value(before, "a2aconsole_deliveries_total", backend="web", outcome="delivered") + 1
    )
    assert value(after, "a2aconsole_watches", source="push") == 0
    names = {f.name for f in text_string_to_metric_families(after)}
    assert set(FAMILIES) <= names, set(FAMILIES) - names
    for secret in (AGENT_KEY, TOKEN, push_token, rec.watch_id, task.id, agent.url):
        assert secret not in after and secret not in armed, secret
