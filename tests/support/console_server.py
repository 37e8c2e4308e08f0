"""The real console server for browser tests: `manage.py serve` in a subprocess on a free loopback port,
with its own data folder, workspace and owner password."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

from a2aconsole.core.files.workspace import Workspace

ROOT = Path(__file__).resolve().parents[2]
OWNER = "owner"
PASSWORD = "browser test password 42"


class ConsoleServer:
    """Start with `start()`, stop with `stop()` (idempotent) or `kill()`. `url` has no trailing slash.

    `port` 0 takes a free one (a fixed port keeps the console's address across restarts, for push);
    `launcher` runs another entry point than `manage.py` with the same arguments (a crash-injecting one)."""

    def __init__(self, base: Path, *, port: int = 0, launcher: list[str] | None = None, **env: str) -> None:
        self.base = base
        self.port = port
        self.launcher = launcher or ["manage.py"]
        self.workspace = Workspace(base / "workspace")
        self.env = {
            **os.environ,
            "A2ACONSOLE_DATA": str(base / "data"),
            "A2ACONSOLE_WORKSPACE": str(self.workspace.root),
            "A2ACONSOLE_OWNER_PASSWORD": PASSWORD,
            "SECRET_KEY": "browser-tests-only",
            "PYTHONUNBUFFERED": "1",
            **env,
        }
        self.env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        self.url = ""
        self.lines: list[str] = []
        self._new_line = threading.Condition()
        self.proc: subprocess.Popen[str] | None = None

    def start(self, timeout: float = 30.0) -> ConsoleServer:
        (self.base / "data").mkdir(parents=True, exist_ok=True)
        self.workspace.root.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [sys.executable, *self.launcher, "serve", "--port", str(self.port)],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        found = threading.Event()

        def read() -> None:
            assert self.proc is not None and self.proc.stdout is not None
            for line in self.proc.stdout:
                with self._new_line:
                    self.lines.append(line.rstrip())
                    self._new_line.notify_all()
                m = re.search(r"serving on (http://\S+?)/? ", line)
                if m and not found.is_set():
                    self.url = m.group(1).rstrip("/")
                    found.set()

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + timeout
        while not found.wait(0.05):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("console server did not start:\n" + "\n".join(self.lines[-30:]))
        return self

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        if self.proc.stdout is not None:
            self._reader.join(timeout=5)
            self.proc.stdout.close()
        self.proc = None

    def kill(self) -> None:
        """SIGKILL, as a crash or the OOM killer would: no shutdown code runs."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        self.stop()

    def wait_for_line(self, text: str, since: int = 0, timeout: float = 15.0) -> list[str]:
        """The output lines from `since` up to the first one containing `text`, once that line is printed."""
        with self._new_line:
            found = self._new_line.wait_for(lambda: any(text in line for line in self.lines[since:]), timeout)
            lines = self.lines[since:]
        if not found:
            raise TimeoutError(f"the console printed no line with {text!r}:\n" + "\n".join(lines[-30:]))
        return lines[: next(i for i, line in enumerate(lines) if text in line) + 1]

    @property
    def ws_url(self) -> str:
        return "ws" + self.url[len("http") :]
