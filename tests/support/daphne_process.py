"""Plain daphne serving `a2aconsole.asgi` in a subprocess, with no migrate and no worker: the web process of a
scale-out, started with whatever environment a test gives it (e.g. a database that is not there)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tests.support.served_process import ServedProcess

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


class DaphneProcess(ServedProcess):
    """`start()` waits for the port; `stop()` ends the process (idempotent). `url` has no trailing slash."""

    def __init__(self, base: Path, **env: str) -> None:
        super().__init__()
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

    def __enter__(self) -> DaphneProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self, timeout: float = 30.0) -> DaphneProcess:
        for folder in ("data", "workspace"):
            (self.base / folder).mkdir(parents=True, exist_ok=True)
        self._spawn("daphne", [sys.executable, "-c", RUN], self.env, _listening_url, timeout)
        return self


def _listening_url(line: str) -> str | None:
    return f"http://127.0.0.1:{int(line.split()[-1])}" if line.startswith("listening on ") else None


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed at once)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
