"""A loopback test agent in a process of its own, so what it builds (a 100 MB answer) is not counted in the
test's memory: `python -m tests.support.agent_process [option=value ...]` prints its URL, then serves until
its stdin closes. `agent_process(**options)` runs one for a `with` block."""

from __future__ import annotations

import contextlib
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def agent_process(**options: Any) -> Iterator[str]:
    """Start the agent process with these AgentOptions (bools and strings); yields its base URL."""
    args = [f"{k}={v}" for k, v in options.items()]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.support.agent_process", *args],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        if not url.startswith("http://"):
            raise RuntimeError(f"the agent process did not start (exit code {proc.poll()})")
        yield url
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def _value(v: str) -> Any:
    """An option's value from its text: a bool (`True`, `false`), a whole number (a port), else the text."""
    if v.lower() in ("true", "false"):
        return v.lower() == "true"
    return int(v) if v.isdigit() else v


def main(argv: list[str]) -> None:
    from tests.support.agents import start_agent

    logging.disable(logging.CRITICAL)
    options = {k: _value(v) for k, _, v in (a.partition("=") for a in argv)}
    agent = start_agent(**options)
    print(agent.url, flush=True)
    sys.stdin.read()
    agent.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
