"""The real console server for browser tests: `manage.py serve` in a subprocess on a free loopback port,
with its own data folder, workspace and owner password."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from a2aconsole.core.files.workspace import Workspace
from tests.support.served_process import ServedProcess

OWNER = "owner"
PASSWORD = "browser test password 42"


class ConsoleServer(ServedProcess):
    """Start with `start()`, stop with `stop()` (idempotent) or `kill()`. `url` has no trailing slash.

    `port` 0 takes a free one (a fixed port keeps the console's address across restarts, for push);
    `launcher` runs another entry point than `manage.py` with the same arguments (a crash-injecting one)."""

    def __init__(self, base: Path, *, port: int = 0, launcher: list[str] | None = None, **env: str) -> None:
        super().__init__()
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

    def start(self, timeout: float = 30.0) -> ConsoleServer:
        (self.base / "data").mkdir(parents=True, exist_ok=True)
        self.workspace.root.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, *self.launcher, "serve", "--port", str(self.port)]
        self._spawn("console server", command, self.env, _served_url, timeout)
        return self

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


def _served_url(line: str) -> str | None:
    m = re.search(r"serving on (http://\S+?)/? ", line)
    return m.group(1) if m else None
