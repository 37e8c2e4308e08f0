"""A server in a subprocess for tests: its output read line by line on a thread, started once it prints the line
that names its address, stopped with SIGTERM (SIGKILL when that is not heard)."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class ServedProcess:
    """`url` (no trailing slash) once started; `lines`, every line it printed so far."""

    def __init__(self) -> None:
        self.url = ""
        self.lines: list[str] = []
        self._new_line = threading.Condition()
        self.proc: subprocess.Popen[str] | None = None
        self._reader: threading.Thread | None = None

    def _spawn(
        self, name: str, command: list[str], env: dict[str, str], url_of: Callable[[str], str | None], timeout: float
    ) -> None:
        """Start `command` (`name` in errors) and wait until a line gives `url_of(line)` its address; a process that
        exits first, or prints none within `timeout` seconds, is stopped and its last lines raised."""
        self.proc = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        found = threading.Event()

        def read() -> None:
            assert self.proc is not None and self.proc.stdout is not None
            for line in self.proc.stdout:
                with self._new_line:
                    self.lines.append(line.rstrip())
                    self._new_line.notify_all()
                url = None if found.is_set() else url_of(line)
                if url:
                    self.url = url.rstrip("/")
                    found.set()

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + timeout
        while not found.wait(0.05):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{name} did not start:\n" + "\n".join(self.lines[-30:]))

    def stop(self) -> None:
        """SIGTERM and wait (SIGKILL after 20 s); idempotent."""
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
            if self._reader is not None:
                self._reader.join(timeout=5)
            self.proc.stdout.close()
        self.proc = None
