"""Real A2A agents on Python `a2a-sdk` 0.3 (the last 0.3 release, protocol 0.3), served by tests/py03/agent_host.py.

0.3 and the console's 1.3 cannot share a virtual environment: the host runs in tests/py03/.venv, built by `make test`
from the committed tests/py03/requirements.txt (hashes pinned). As the JS agents are, it is one process per test
session serving every agent under a path prefix over the JS host's control API, so a `Py03Agent` is a `JsAgent` to a
test: `url`, `received`, `requests`, `methods` (1.0 names), `finished`, `release(gate)`, `forget()`, `stop()`, with
the Python agent's options (a subset) and its command language.

What the real 0.3 SDK does on the wire, and the tests rely on (issue 26, tests/core/tool/test_matrix.py):

- `tasks/resubscribe` streams the task's events from then on, without the task first, and answers task-not-found
  for a task with no work running (one asking a question, or one the agent restarted from its store);
- `historyLength: 0` is read as "no limit": the whole history comes back;
- an unknown JSON-RPC method is answered -32601 (method not found), HTTP 200;
- its card has no `supportedInterfaces`: `url` and `preferredTransport` (JSON-RPC, or HTTP+JSON at `/v1/...`).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import httpx

from tests.support.agents import AgentOptions
from tests.support.js_agents import JsAgent, JsAgentHost, JsSdk

PY03_DIR = Path(__file__).resolve().parents[1] / "py03"
PY03_PYTHON = PY03_DIR / ".venv" / "bin" / "python"
# the host as JsAgent reads it (its agents' `sdk`); its own `make` checks the options it offers
PY03 = JsSdk(PY03_DIR, (), "py03")
# the Python agent's options this host offers (the rest stay 1.3-only)
_OFFERED = ("name", "description", "key", "bearer_only", "streaming", "push", "message_only", "cancel_answer")


class Py03AgentHost(JsAgentHost):
    """The a2a-sdk 0.3 host process on 127.0.0.1 (the JS host's process handling: it exits when its stdin closes)."""

    def __init__(self, log_path: Path) -> None:  # not the JS host's: another program, the same protocol
        if not PY03_PYTHON.exists():
            raise RuntimeError(
                "the a2a-sdk 0.3 test agents' environment is missing: run `make tests/py03/.venv/.installed` "
                "(make test does)"
            )
        self.sdk = PY03
        self.log_path = log_path
        self._log = log_path.open("wb")
        self.proc = subprocess.Popen(
            [str(PY03_PYTHON), str(PY03_DIR / "agent_host.py")],
            cwd=PY03_DIR,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            # not the console's PYTHONPATH: the 0.3 venv has its own `a2a`
            env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")},
        )
        try:
            self.port = self._read_port()
        except BaseException:
            self.stop()
            raise
        self.url = f"http://127.0.0.1:{self.port}"
        self.control = httpx.Client(base_url=f"{self.url}/_control", timeout=10.0)

    def make(self, *, rest: bool = False, agent_id: str = "", **options: Any) -> Py03Agent:
        """A new agent with the Python agent's options (those of `_OFFERED`); `rest=True` serves the 0.3 HTTP+JSON
        binding instead of JSON-RPC."""
        opts = AgentOptions(**options)
        extra = sorted(set(options) - set(_OFFERED))
        if extra:
            raise ValueError(f"the a2a-sdk 0.3 test agent does not offer {', '.join(extra)}")
        body = {
            "name": opts.name,
            "description": opts.description,
            "key": opts.key,
            "bearerOnly": opts.bearer_only,
            "streaming": opts.streaming,
            "push": opts.push,
            "messageOnly": opts.message_only,
            "binding": "HTTP+JSON" if rest else "JSONRPC",
            "cancelAnswer": opts.cancel_answer,
        }
        if agent_id:
            body["id"] = agent_id
        made = self.control.post("/agents", json=body).raise_for_status().json()
        return Py03Agent(self, made["id"], made["url"], opts)


class Py03Agent(JsAgent):
    """One agent in the 0.3 host."""

    __test__ = False

    def __repr__(self) -> str:
        return f"Py03Agent({self.url})"

    def hold(self, *methods: str) -> None:
        """Calls of these methods (1.0 names: "SubscribeToTask") wait at the agent for `release("calls")`."""
        self.host.control.post(f"/agents/{self.id}/hold-methods", json={"methods": list(methods)}).raise_for_status()

    def streaming_to(self, task_id: str) -> bool:
        """A subscription to the task receives its events now: a 0.3 one sends nothing until the task's next event,
        so a test waits for this (not for the call) before the task moves on."""
        return task_id in self._state()["tapped"]
