"""The real `manage.py serve`, spoken to as a TLS-terminating proxy would: plain HTTP with the browser's Host and
Origin and X-Forwarded-Proto. With the public URL set, the owner logs in, the live page's WebSocket opens, HSTS is
sent; meanwhile every file in the data folder, SQLite's -wal and -shm included, is 0600 in a 0700 folder."""

from __future__ import annotations

import os
import re
import signal
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.live.test_serve_smoke import Served
from tests.web.test_settings import ROOT, clean_env

PASSWORD = "a proxied owner password 7"
PUBLIC = "https://console.example"
FROM_PROXY = {
    "Host": "console.example",
    "Origin": PUBLIC,
    "X-Forwarded-Proto": "https",
    "X-Forwarded-For": "203.0.113.9",
}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    env = clean_env(
        tmp_path / "data",
        tmp_path / "ws",
        PYTHONUNBUFFERED="1",
        A2AClient__Enabled="false",
        A2ACONSOLE_OWNER_PASSWORD=PASSWORD,
        A2ACONSOLE_PUBLIC_URL=PUBLIC,
        A2ACONSOLE_TRUST_PROXY="true",
    )
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--host", "127.0.0.1", "--port", "0"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=lambda: os.umask(0o022),
    )
    s = Served(proc)

    def pump() -> None:
        for line in proc.stdout:
            s.lines.put(line)
        s.lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    yield s
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    proc.stdout.close()


def cookie_header(*responses: httpx.Response) -> str:
    """The cookies a browser would send back over https (httpx keeps `Secure` ones off plain http)."""
    jar: dict[str, str] = {}
    for r in responses:
        for raw in r.headers.get_list("set-cookie"):
            c = SimpleCookie(raw)
            for name, morsel in c.items():
                assert morsel["secure"], f"{name} cookie is not Secure"
                jar[name] = morsel.value
    return "; ".join(f"{k}={v}" for k, v in jar.items())


def websocket_status(url: str, path: str, headers: dict[str, str]) -> str:
    """The status line daphne answers a WebSocket handshake with (101 accepted, 403 refused)."""
    parts = urlsplit(url)
    request = [f"GET {path} HTTP/1.1", "Upgrade: websocket", "Connection: Upgrade"]
    request += ["Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13"]
    request += [f"{k}: {v}" for k, v in headers.items()]
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(("\r\n".join(request) + "\r\n\r\n").encode())
        return sock.recv(4096).decode("latin-1").split("\r\n", 1)[0]


def test_owner_logs_in_through_the_proxy_and_the_data_stays_private(served: Served, tmp_path: Path) -> None:
    url = served.wait_for(r"serving on (http://127\.0\.0\.1:\d+)/").group(1)
    with httpx.Client(base_url=url, timeout=10, headers=FROM_PROXY) as http:
        page = http.get("/login/")
        assert page.status_code == 200
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        form = {"username": "owner", "password": PASSWORD, "csrfmiddlewaretoken": token}
        done = http.post("/login/", data=form, headers={"Cookie": cookie_header(page)})
        assert done.status_code == 302 and done.headers["location"] == "/", done.text
        cookies = cookie_header(page, done)
        home = http.get("/", headers={"Cookie": cookies})
        assert home.status_code == 200
        assert home.headers["strict-transport-security"] == "max-age=31536000; includeSubDomains"
        # not through the proxy (no X-Forwarded-Proto): sent to https
        plain = httpx.get(f"{url}/login/", headers={"Host": "console.example"})
        assert plain.status_code == 301 and plain.headers["location"] == "https://console.example/login/"

    ws_headers = {k: v for k, v in FROM_PROXY.items() if k != "X-Forwarded-For"}
    assert websocket_status(url, "/ws/console/dashboard/", {**ws_headers, "Cookie": cookies}).startswith("HTTP/1.1 101")
    evil = {**ws_headers, "Origin": "https://evil.example", "Cookie": cookies}
    assert websocket_status(url, "/ws/console/dashboard/", evil).startswith("HTTP/1.1 403")

    data = tmp_path / "data"
    names = set(os.listdir(data))
    assert {"db.sqlite3", "db.sqlite3-wal", "db.sqlite3-shm", "secret_key"} <= names  # the server holds it open
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    modes = {n: oct(stat.S_IMODE((data / n).lstat().st_mode)) for n in names}
    assert {n: m for n, m in modes.items() if m != oct(0o600)} == {}

    code, output = served.stop(signal.SIGINT)
    assert code == 0, output
    assert PASSWORD not in output and "Traceback" not in output
