"""What the internet can send the console's HTTP side: bodies too big to hold, paths outside the static folder or
with a NUL, a foreign Host header. Each is a 4xx with one log line; none costs memory past the body cap.

The body cap is checked against the real `manage.py serve` (daphne), reading the server's own memory figures."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator

import httpx
import pytest
from channels.testing import ApplicationCommunicator, HttpCommunicator
from django.contrib.auth.models import User
from django.http import HttpResponse
from django.test import Client, override_settings

from a2aconsole.asgi import application
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.models import ChatTarget
from a2aconsole.web.process.body_limit import MARGIN_BYTES, body_cap
from a2aconsole.web.request_log import ClientErrorLine
from tests.support.console_server import ConsoleServer
from tests.support.csp import assert_strict_csp
from tests.support.memory import reset_peak, status_kb
from tests.support.raw_http import chunked, request, zeros

MB = 1024 * 1024
HUGE = 300 * MB


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


def test_serve_refuses_300_mb_bodies_without_holding_them(console: ConsoleServer) -> None:
    assert console.proc is not None
    pid = console.proc.pid
    cap = 10 * MB * 4 // 3 + MARGIN_BYTES  # the default MaxFileBytes (10 MB) as base64, plus the margin
    seen = len(console.lines)
    log_since(console, seen, "warm-up")  # a small push still reaches the app (no such watch)
    seen = len(console.lines)
    reset_peak(pid)
    before = status_kb("VmRSS", pid)

    declared = request(console.url, push_head("/a2a/push/w1", length=HUGE), zeros(HUGE))
    assert declared.status == 413
    assert json.loads(declared.body) == {"error": f"the request body is over {cap} bytes (see A2AClient__MaxFileBytes)"}
    assert declared.headers["connection"] == "close"
    assert declared.sent < 20 * MB  # answered as soon as the headers were in

    # a chunked push without the watch's token: refused as soon as its headers are in
    stranger = request(console.url, push_head("/a2a/push/w1", token="wrong"), chunked(zeros(HUGE)))
    assert stranger.status == 404 and json.loads(stranger.body) == {"error": "no such watch"}
    assert stranger.sent < 20 * MB

    # any other chunked body: stopped at the cap
    form = b"POST /login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    streamed = request(console.url, form, chunked(zeros(HUGE)))
    assert streamed.status == 413
    assert streamed.sent < cap + 20 * MB  # stopped at the cap, not at the end

    grown_mb = (status_kb("VmHWM", pid) - before) / 1024
    assert grown_mb < 20, f"the server's peak RSS grew by {grown_mb:.1f} MB"
    lines = log_since(console, seen, "after-huge")
    assert len(lines) == 3, lines
    assert "refused a request body over" in lines[0] and "refused a request body over" in lines[2]
    assert "without its token refused before its body: /a2a/push/w1" in lines[1]


def test_serve_takes_a_body_just_under_the_cap(console: ConsoleServer) -> None:
    cap = 10 * MB * 4 // 3 + MARGIN_BYTES
    form = b"POST /login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    r = request(console.url, form, chunked(zeros(cap)))
    assert r.status == 403 and b"CSRF" in r.body  # Django answered it


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


# -- item 8: bad paths and hosts are 4xx with one log line --------------------------------------------------------


def one_line(caplog: pytest.LogCaptureFixture) -> logging.LogRecord:
    records = [r for r in caplog.records if r.name.startswith("django")]
    assert len(records) == 1, [r.getMessage() for r in records]
    assert records[0].exc_info is None and records[0].levelno == logging.WARNING
    assert "Traceback" not in caplog.text
    return records[0]


async def test_static_path_outside_the_folder_is_400(caplog: pytest.LogCaptureFixture) -> None:
    comm = HttpCommunicator(application, "GET", "/static/%2e%2e/%2e%2e/etc/passwd")
    comm.scope["path"] = "/static/../../etc/passwd"  # as daphne and uvicorn decode it
    with caplog.at_level(logging.INFO):
        r = await comm.get_response(5)
        await comm.wait(5)  # the handler closes the request's body file once the answer is sent
    assert r["status"] == 400
    assert b"passwd" not in r["body"] and b"/static" not in r["body"]
    assert one_line(caplog).name == "django.security.SuspiciousFileOperation"


@pytest.mark.django_db
def test_download_path_with_a_nul_byte_is_404(ws: Workspace, caplog: pytest.LogCaptureFixture) -> None:
    ChatTarget.objects.create(id="console", name="Console", workspace=str(ws.root))
    ws.inbox_dir.mkdir(parents=True)
    (ws.inbox_dir / "ok.txt").write_text("fine")
    c = Client()
    c.force_login(_owner())
    ok = c.get("/files/console/inbox/a2a/ok.txt")
    assert ok.status_code == 200 and b"".join(ok.streaming_content) == b"fine"
    ok.close()
    with caplog.at_level(logging.INFO):
        r = c.get("/files/console/inbox/a2a/ok%00.txt")
    assert r.status_code == 404
    assert one_line(caplog).name == "django.request"


@pytest.mark.django_db
def test_foreign_host_is_400_with_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        r = Client().get("/login/", HTTP_HOST="evil.example")
    assert r.status_code == 400
    assert "evil.example" in one_line(caplog).getMessage()


def test_serve_logs_one_line_for_each_bad_request(console: ConsoleServer) -> None:
    log_since(console, len(console.lines), "before-bad-requests")  # what earlier tests made it log is all in
    seen = len(console.lines)
    asks = [
        b"GET /static/%2e%2e/%2e%2e/etc/passwd HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"GET /static/css/%00web.css HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"GET /login/ HTTP/1.1\r\nHost: evil.example\r\n\r\n",
        b"POST /a2a/push/x HTTP/1.1\r\nHost: evil.example\r\nContent-Length: 2\r\n\r\n{}",
    ]
    statuses = [request(console.url, ask).status for ask in asks]
    assert statuses == [400, 404, 400, 400]
    lines = log_since(console, seen, "after-bad-requests")
    assert len(lines) == 3, lines  # the traversal and the two foreign hosts; a missing static file is not logged
    assert "SuspiciousFileOperation" in lines[0] and all("DisallowedHost" in line for line in lines[1:])
    assert all(" WARNING " in line for line in lines), lines


def _owner() -> User:
    return User.objects.create_user("owner", password="a long enough password")


def test_server_errors_keep_their_traceback() -> None:
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        record = logging.getLogger("django.request").makeRecord(
            "django.request", logging.ERROR, __file__, 1, "Internal Server Error: /", (), sys.exc_info()
        )
    record.status_code = 500
    assert ClientErrorLine().filter(record) and record.exc_info is not None and record.levelno == logging.ERROR


# -- #28 item 6: the static folder's answers carry the security headers and never touch a cookie ------------------

OWNERS_COOKIES = "csrftoken=4rV8mWq1ZnTq0YvTNoHq8uQ3Kx2W1aBc; sessionid=abc"


@pytest.mark.parametrize("cookie", ["", OWNERS_COOKIES])
@pytest.mark.parametrize(
    ("path", "status"),
    [("/static/css/web.css", 200), ("/static/nope.css", 404), ("/static/%2e%2e/%2e%2e/etc/passwd", 400)],
)
def test_static_answers_carry_the_security_headers_and_no_cookie(
    console: ConsoleServer, path: str, status: int, cookie: str
) -> None:
    """A 404 there set a fresh `csrftoken` (the owner's open forms then answered 403) and, like every static
    answer, had no CSP, frame denial, nosniff or Referrer-Policy."""
    r = httpx.get(console.url + path, headers={"Cookie": cookie} if cookie else {})
    assert r.status_code == status
    assert "set-cookie" not in r.headers
    assert r.headers["x-frame-options"] == "DENY"
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["referrer-policy"] == "same-origin"
    assert r.headers["cross-origin-opener-policy"] == "same-origin"
    assert_strict_csp(path, HttpResponse(headers={"Content-Security-Policy": r.headers["content-security-policy"]}))
    assert r.headers["content-security-policy"].count(f"{console.url}/static/") == 2  # script-src, style-src
    if status != 200:
        assert r.headers["content-type"] == "text/plain; charset=utf-8" and b"passwd" not in r.content
