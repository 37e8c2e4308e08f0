"""Plain daphne serving `a2aconsole.asgi` in a subprocess, with no migrate and no worker: the web process of a
scale-out, started with whatever environment a test gives it (e.g. a database that is not there)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# daphne's own CLI logs its port only at INFO, which the console's logging hides: print it from ready_callable
RUN = """
import django
django.setup()
from daphne.server import Server
from a2aconsole.asgi import application

def ready():
    print("listening on", server.listening_addresses[0][1], flush=True)

server = Server(application=application, endpoints=["tcp:port=0:interface=127.0.0.1"], ready_callable=ready,
                verbosity=0)
server.run()
"""


class DaphneProcess:
    """`start()` waits for the port; `stop()` ends the process (idempotent). `url` has no trailing slash."""

    def __init__(self, base: Path, **env: str) -> None:
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "a2aconsole.settings",
            "A2ACONSOLE_DATA": str(base / "data"),
            "A2ACONSOLE_WORKSPACE": str(base / "workspace"),
            "SECRET_KEY": "daphne-process-tests-only",
            "PYTHONUNBUFFERED": "1",
            **env,
        }
        for name in ("DJANGO_ALLOW_ASYNC_UNSAFE", *(k for k, v in env.items() if v == "")):
            self.env.pop(name, None)
        self.base = base
        self.url = ""
        self.lines: list[str] = []
        self.proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> DaphneProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self, timeout: float = 30.0) -> DaphneProcess:
        for folder in ("data", "workspace"):
            (self.base / folder).mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", RUN],
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
                self.lines.append(line.rstrip())
                if line.startswith("listening on ") and not found.is_set():
                    self.url = f"http://127.0.0.1:{int(line.split()[-1])}"
                    found.set()

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + timeout
        while not found.wait(0.05):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("daphne did not start:\n" + "\n".join(self.lines[-30:]))
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


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed at once)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
