"""What the internet can send the console's HTTP side: bodies too big to hold. Each is a 4xx with one log line;
none costs memory past the body cap.

The body cap is checked against the real `manage.py serve` (daphne), reading the server's own memory figures."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from channels.testing import ApplicationCommunicator
from django.test import override_settings

from a2aconsole.asgi import application
from a2aconsole.core.config import ClientSettings
from a2aconsole.web.body_limit import MARGIN_BYTES, body_cap
from tests.support.console_server import ConsoleServer
from tests.support.raw_http import chunked, request, zeros

MB = 1024 * 1024
HUGE = 300 * MB


def memory_kb(pid: int) -> dict[str, int]:
    """VmRSS (now) and VmHWM (peak) of a process, in kB."""
    figures = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            figures[name] = int(value.split()[0])
    return figures


def reset_peak(pid: int) -> None:
    """Start VmHWM afresh at the current RSS (Linux >= 4.0)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def push_head(path: str, *, length: int | None = None, token: str | None = None, host: str = "127.0.0.1") -> bytes:
    lines = [f"POST {path} HTTP/1.1", f"Host: {host}", "Content-Type: application/json"]
    lines.append(f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked")
    if token:
        lines.append(f"X-A2A-Notification-Token: {token}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleServer]:
    server = ConsoleServer(tmp_path_factory.mktemp("hostile")).start()
    yield server
    server.stop()


def log_since(console: ConsoleServer, since: int, marker: str) -> list[str]:
    """What the server logged since line `since`: a push to an unknown watch named `marker` is logged last
    ("Not Found"), so every line logged before it is in."""
    r = request(console.url, push_head(f"/a2a/push/{marker}", length=2, token="t"), iter([b"{}"]))
    assert r.status == 404
    lines = console.wait_for_line(f"Not Found: /a2a/push/{marker}", since)[:-1]
    return [line for line in lines if "watch worker" not in line]


# -- item 7: a body over the cap is refused before anything holds it --------------------------------------------


def test_serve_refuses_a_300_mb_push_without_holding_it(console: ConsoleServer) -> None:
    assert console.proc is not None
    pid = console.proc.pid
    cap = 10 * MB * 4 // 3 + MARGIN_BYTES  # the default MaxFileBytes (10 MB) as base64, plus the margin
    seen = len(console.lines)
    log_since(console, seen, "warm-up")  # a small push still reaches the app (no such watch)
    seen = len(console.lines)
    reset_peak(pid)
    before = memory_kb(pid)["VmRSS"]

    declared = request(console.url, push_head("/a2a/push/w1", length=HUGE), zeros(HUGE))
    assert declared.status == 413
    assert json.loads(declared.body) == {"error": f"the request body is over {cap} bytes (see A2AClient__MaxFileBytes)"}
    assert declared.headers["connection"] == "close"
    assert declared.sent < 20 * MB  # answered as soon as the headers were in

    streamed = request(console.url, push_head("/a2a/push/w1"), chunked(zeros(HUGE)))
    assert streamed.status == 413
    assert streamed.sent < cap + 20 * MB  # stopped at the cap, not at the end

    after = memory_kb(pid)
    grown_mb = (after["VmHWM"] - before) / 1024
    assert grown_mb < 20, f"the server's peak RSS grew by {grown_mb:.1f} MB"
    lines = log_since(console, seen, "after-huge")
    assert len(lines) == 2 and all("refused a request body over" in line for line in lines), lines


def test_serve_takes_a_body_just_under_the_cap(console: ConsoleServer) -> None:
    cap = 10 * MB * 4 // 3 + MARGIN_BYTES
    body = iter([b"{", *zeros(cap - 2), b"}"])
    r = request(console.url, push_head("/a2a/push/w2", token="t"), chunked(body))
    assert r.status == 404 and json.loads(r.body) == {"error": "no such watch"}  # Django answered it


def http_scope(path: str, headers: list[tuple[bytes, bytes]]) -> dict:
    return {
        "type": "http",
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1"), *headers],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }


SMALL = ClientSettings(max_file_bytes=3)  # cap = 4 bytes + the margin


@override_settings(A2A_CLIENT=SMALL)
async def test_asgi_limit_refuses_a_declared_body_before_reading_it() -> None:
    assert body_cap() == 4 + MARGIN_BYTES
    comm = ApplicationCommunicator(application, http_scope("/a2a/push/x", [(b"content-length", b"%d" % HUGE)]))
    await comm.send_input({"type": "http.request", "body": b"{", "more_body": True})
    start = await comm.receive_output(5)
    body = await comm.receive_output(5)
    assert start["status"] == 413 and b"over 1048580 bytes" in body["body"]
    assert comm.input_queue.qsize() == 1  # the app never read a byte of the body
    await comm.wait(5)


@override_settings(A2A_CLIENT=SMALL)
async def test_asgi_limit_stops_a_chunked_body_at_the_cap() -> None:
    comm = ApplicationCommunicator(application, http_scope("/a2a/push/x", []))
    block = b" " * (256 * 1024)
    for _ in range(10):  # 2.5 MB queued; the cap is 1 MB + 4
        await comm.send_input({"type": "http.request", "body": block, "more_body": True})
    start = await comm.receive_output(5)
    await comm.receive_output(5)
    assert start["status"] == 413
    assert comm.input_queue.qsize() == 10 - 5  # read up to the block that passed the cap, no further
    await comm.wait(5)
