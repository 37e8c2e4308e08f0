"""The real `manage.py serve` in a child process: it starts on a free loopback port, lets the owner in, and stops
cleanly on SIGINT / SIGTERM."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
START_SECONDS = 60
PASSWORD = "a smoke test password 42"
OURS = ("A2AClient__", "A2A__", "A2ACONSOLE_", "DATABASE_URL", "REDIS_URL", "ALLOWED_HOSTS", "SECRET_KEY")


@dataclass
class Served:
    proc: subprocess.Popen[str]
    lines: queue.Queue[str | None] = field(default_factory=queue.Queue)
    seen: list[str] = field(default_factory=list)

    def wait_for(self, pattern: str) -> re.Match[str]:
        """The first output line matching `pattern`, waiting (bounded) for the server to print it."""
        deadline = time.monotonic() + START_SECONDS
        while True:
            for line in self.seen:
                if m := re.search(pattern, line):
                    return m
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"serve did not print {pattern!r}; it printed: {self.seen}")
            if line is None:
                pytest.fail(f"serve exited ({self.proc.wait()}) before printing {pattern!r}: {self.seen}")
            self.seen.append(line)

    def stop(self, sig: signal.Signals) -> tuple[int, str]:
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout=30)
        rest = []
        while (line := self.lines.get(timeout=10)) is not None:
            rest.append(line)
        return code, "".join(self.seen + rest)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., Served]]:
    started: list[Served] = []

    def start(**env: str) -> Served:
        base = {k: v for k, v in os.environ.items() if not k.startswith(OURS)}
        base.update(A2ACONSOLE_DATA=str(tmp_path / "data"), A2ACONSOLE_WORKSPACE=str(tmp_path / "ws"))
        base.update(PYTHONUNBUFFERED="1", **env)
        proc = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--host", "127.0.0.1", "--port", "0"],
            cwd=ROOT,
            env=base,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        served = Served(proc)

        def pump() -> None:
            for line in proc.stdout:
                served.lines.put(line)
            served.lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        started.append(served)
        return served

    yield start
    for s in started:
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait()
        s.proc.stdout.close()


def csrf_of(page: httpx.Response) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)


def test_serve_with_owner_password_logs_in_and_stops_on_sigint(serve: Callable[..., Served], tmp_path: Path) -> None:
    served = serve(A2ACONSOLE_OWNER_PASSWORD=PASSWORD)
    url = served.wait_for(r"serving on (http://127\.0\.0\.1:\d+)/").group(1)
    assert any("owner account: created 'owner'" in line for line in served.seen)
    assert (tmp_path / "ws").is_dir()
    served.wait_for(r"^A2A client: on")

    with httpx.Client(base_url=url, timeout=10) as http:
        assert http.get("/").status_code == 302
        login = http.get("/login/")
        assert login.status_code == 200 and "setup link" not in login.text
        wrong = http.post(
            "/login/", data={"username": "owner", "password": "nope", "csrfmiddlewaretoken": csrf_of(login)}
        )
        assert wrong.status_code == 200
        ok = http.post(
            "/login/", data={"username": "owner", "password": PASSWORD, "csrfmiddlewaretoken": csrf_of(wrong)}
        )
        assert ok.status_code == 302 and ok.headers["location"] == "/"
        dashboard = http.get("/")
        assert dashboard.status_code == 200 and "/login/" not in str(dashboard.url)
        # Static files (the stylesheet, htmx) come from the same process.
        for src in re.findall(r'(?:src|href)="(/static/[^"]+)"', login.text):
            assert http.get(src).status_code == 200, src
        assert http.get("/setup/anything/").status_code == 404

    code, output = served.stop(signal.SIGINT)
    assert code == 0, output
    assert "a2aconsole stopped" in output and "Traceback" not in output
    assert PASSWORD not in output


def test_first_run_prints_a_one_time_link_and_stops_on_sigterm(serve: Callable[..., Served]) -> None:
    served = serve(A2AClient__Enabled="false")
    served.wait_for(r"^A2A client: off")
    link = served.wait_for(r"first run: open (http://127\.0\.0\.1:\d+)(/setup/[\w-]+/)")
    url, path = link.group(1), link.group(2)

    with httpx.Client(base_url=url, timeout=10) as http:
        assert "one-time set-up link" in http.get("/login/").text
        page = http.get(path)
        assert page.status_code == 200
        created = http.post(
            path,
            data={"username": "me", "password1": PASSWORD, "password2": PASSWORD, "csrfmiddlewaretoken": csrf_of(page)},
        )
        assert created.status_code == 302 and created.headers["location"] == "/"
        assert http.get("/").status_code == 200
        assert http.get(path).status_code == 404

    code, output = served.stop(signal.SIGTERM)
    assert code == 0, output
    assert "a2aconsole stopped" in output and "Traceback" not in output
