"""`/healthz` and `/readyz`: no login, any Host, and /readyz names what is not ready (database, channel layer,
worker lease) without telling secrets. The broken-service cases run real daphne processes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from django.test import AsyncClient, Client, override_settings

from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.watches.lease import lease_holder, lease_path
from a2aconsole.web.process.runtime import build_runtime, close_runtime, install_runtime
from tests.support.console import CONSOLE_SETTINGS
from tests.support.console_server import ConsoleServer
from tests.support.daphne_process import DaphneProcess, closed_port


def test_healthz_answers_without_login_database_or_allowed_host() -> None:
    # no django_db mark: touching the database here would fail the test
    for host in ("testserver", "10.1.2.3:8000", "not-allowed.example"):
        r = Client().get("/healthz", HTTP_HOST=host)
        assert r.status_code == 200, host
        assert r.content == b"ok\n"
        assert r["Content-Type"].startswith("text/plain")


def test_probes_answer_get_only() -> None:
    r = Client().post("/healthz")
    assert r.status_code == 405
    assert r["Allow"] == "GET"


@pytest.mark.django_db
@override_settings(A2A_WATCH_WORKER="external")
def test_readyz_of_a_scale_out_web_process_needs_no_lease() -> None:
    r = Client().get("/readyz", HTTP_HOST="10.0.0.7:8000")  # a probe by IP, not a console page: no login redirect
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["ready"] is True and body["failed"] == []
    assert body["checks"]["database"]["ok"] and body["checks"]["channel_layer"]["ok"]
    assert "external" in body["checks"]["worker_lease"]["detail"]


@pytest.mark.django_db
def test_readyz_of_the_embedded_console_is_not_ready_before_its_worker_runs(ws: Workspace) -> None:
    r = Client().get("/readyz")
    assert r.status_code == 503
    body = r.json()
    assert body["failed"] == ["worker_lease"]
    assert "not running" in body["checks"]["worker_lease"]["detail"]


@pytest.fixture
async def worker(ws: Workspace) -> AsyncIterator[None]:
    rt = install_runtime(build_runtime(client_settings=CONSOLE_SETTINGS))
    await rt.start_registry([ws])
    yield
    await close_runtime()


@pytest.mark.django_db(transaction=True)
async def test_readyz_of_the_embedded_console_with_its_worker_holding_the_lease(ws: Workspace, worker: None) -> None:
    r = await AsyncClient().get("/readyz")  # the async path: the view runs in this loop, beside the worker
    assert r.status_code == 200, r.content
    assert "this process runs 1 of 1 workspace(s)" in r.json()["checks"]["worker_lease"]["detail"]


HOLD = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, f"{os.getpid()}\\n".encode())
print("held", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def held_elsewhere(ws: Workspace) -> Iterator[int]:
    """Another process holds the workspace's lease until the test ends; yields its pid."""
    path = lease_path(ws)
    path.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        yield holder.pid
    finally:
        holder.communicate(b"", timeout=10)
    assert lease_holder(ws) is None  # the holder ended: nobody holds it, and looking took nothing


@pytest.mark.django_db(transaction=True)
async def test_readyz_knows_another_process_holds_the_lease(ws: Workspace, held_elsewhere: int) -> None:
    """A second embedded console (its worker runs, but another process runs this workspace) is still ready."""
    assert lease_holder(ws) == str(held_elsewhere)
    rt = install_runtime(build_runtime(client_settings=CONSOLE_SETTINGS))
    try:
        await rt.start_registry([ws])
        assert not rt.leases.holds(ws)
        r = await AsyncClient().get("/readyz")
        assert r.status_code == 200, r.content
        assert "other processes 1" in r.json()["checks"]["worker_lease"]["detail"]
    finally:
        await close_runtime()


def readyz(base: Path, **env: str) -> tuple[int, dict, str]:
    with DaphneProcess(base, A2ACONSOLE_WATCH_WORKER="external", **env) as server:
        r = httpx.get(f"{server.url}/readyz", headers={"Host": "127.0.0.1"}, timeout=30)
    return r.status_code, r.json(), r.text


def test_readyz_names_the_database_when_it_is_unreachable(tmp_path: Path) -> None:
    url = f"postgres://dbuser:db-password-42@127.0.0.1:{closed_port()}/a2aconsole"
    status, body, text = readyz(tmp_path, DATABASE_URL=url, REDIS_URL="")
    assert status == 503
    assert body["failed"] == ["database"]
    assert body["checks"]["channel_layer"]["ok"]
    assert "db-password-42" not in text and "dbuser" not in text  # no part of the URL


def test_readyz_names_the_channel_layer_when_redis_is_down(tmp_path: Path) -> None:
    url = f"redis://:redis-password-42@127.0.0.1:{closed_port()}/0"
    status, body, text = readyz(tmp_path, REDIS_URL=url, DATABASE_URL="")
    assert status == 503
    assert body["failed"] == ["channel_layer"]
    assert body["checks"]["database"]["ok"]
    assert "redis-password-42" not in text


def test_readyz_of_a_real_web_process_when_all_is_well(tmp_path: Path) -> None:
    status, body, _ = readyz(tmp_path, DATABASE_URL="", REDIS_URL="")
    assert status == 200, json.dumps(body)


def test_readyz_and_metrics_of_the_real_embedded_console(tmp_path: Path) -> None:
    """`manage.py serve`: its worker runs in daphne's loop, where /readyz looks for it; metrics on the token."""
    token = "embedded-metrics-token-31d9"
    server = ConsoleServer(tmp_path, A2ACONSOLE_METRICS_TOKEN=token, ALLOWED_HOSTS="console.example").start()
    try:
        server.wait_for_line("watch worker started", timeout=30)
        r = httpx.get(f"{server.url}/readyz", timeout=30)  # Host 127.0.0.1: not an allowed host, still answered
        assert r.status_code == 200, r.text
        assert "this process runs 1 of 1 workspace(s)" in r.json()["checks"]["worker_lease"]["detail"]
        m = httpx.get(f"{server.url}/metrics", headers={"Authorization": f"Bearer {token}"}, timeout=30)
        assert m.status_code == 200
        assert f'a2aconsole_worker_lease_held{{workspace="{server.workspace.root.resolve()}"}} 1.0' in m.text
        assert httpx.get(f"{server.url}/", timeout=30).status_code == 400  # pages still check the host
    finally:
        server.stop()
