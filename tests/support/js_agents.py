"""Real A2A agents on the second SDK: npm `@a2a-js/sdk`, served by tests/js/agent.js (1.3) or tests/js03/agent.js
(0.3, protocol 0.3) in one node process each.

The process is started once per test session (`JsAgentHost`, given the SDK: `JS13` or `JS03`); each test makes its
own agents in it over a small control API (a path prefix, card, task store and recordings per agent) and drops
them afterwards, so a `JsAgent` looks to a test like the Python `TestAgent`: `url`, `received`, `requests`,
`methods`, `finished`, `release(gate)`, `stop()`. The command language is the same (`hello`, `slow N`,
`hold <gate>`, `ask`, `auth`, `file`, `bigfile N`, `fail`, `message`).
"""

from __future__ import annotations

import os
import selectors
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.support.agents import AgentOptions, Received, TestAgent

JS_DIR = Path(__file__).resolve().parents[1] / "js"
START_TIMEOUT = 20.0
# the JS agent speaks the Python agent's options; these it does not offer (tests needing them stay Python-only)
_UNSUPPORTED = (
    "drop_streams",
    "snapshot_streams",
    "legacy",
    "one_task_per_context",
    "port",
    "card_path",
    "naive_times",
)


@dataclass(frozen=True)
class JsSdk:
    """One `@a2a-js/sdk` release's test agent: its directory (package.json, lock file, agent.js), the Python
    agent's options it does not offer, and the name its agents give as `JsAgent.sdk`."""

    directory: Path
    unsupported: tuple[str, ...]
    name: str


JS13 = JsSdk(JS_DIR, _UNSUPPORTED, "js")
# the 0.3 agent: a plain 0.3 card and handler, as that SDK's samples make one (no ListTasks in protocol 0.3)
JS03 = JsSdk(
    JS_DIR.parent / "js03",
    (
        *_UNSUPPORTED,
        "extended",
        "interface_url",
        "decoy_interface",
        "safe_push_urls",
        "list_tasks",
        "cancel_answer",
        "chunked",
        "gzip_calls",
    ),
    "js03",
)


class JsAgentHost:
    """The node process serving JS agents on 127.0.0.1; it exits when its stdin closes (even if we die)."""

    def __init__(self, log_path: Path, port: int = 0, sdk: JsSdk = JS13) -> None:
        """`port`: the one to listen on (a host started again where one stopped), else any free one; `sdk`: the
        release whose agent it runs."""
        node = shutil.which("node")
        if node is None:
            raise RuntimeError("node is not installed: the JS test agents need Node 20 (apt-get install nodejs)")
        here = sdk.directory
        if not (here / "node_modules" / "@a2a-js" / "sdk").is_dir():
            raise RuntimeError(f"the JS agent's packages are missing: run `npm ci --prefix {here}` (make test does)")
        self.sdk = sdk
        self.log_path = log_path
        self._log = log_path.open("wb")
        self.proc = subprocess.Popen(
            [node, str(here / "agent.js")],
            cwd=here,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env={**os.environ, "NODE_NO_WARNINGS": "1", "A2A_TEST_PORT": str(port)},
        )
        try:
            self.port = self._read_port()
        except BaseException:
            self.stop()
            raise
        self.url = f"http://127.0.0.1:{self.port}"
        self.control = httpx.Client(base_url=f"{self.url}/_control", timeout=10.0)

    def _read_port(self) -> int:
        assert self.proc.stdout is not None
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        try:
            if not sel.select(START_TIMEOUT):
                raise RuntimeError(f"the JS agent printed no port within {START_TIMEOUT:.0f}s; {self._tail()}")
            line = self.proc.stdout.readline().decode().strip()
        finally:
            sel.close()
        if not line.isdigit():
            raise RuntimeError(f"the JS agent did not start (printed {line!r}); {self._tail()}")
        return int(line)

    def _tail(self) -> str:
        self._log.flush()
        text = self.log_path.read_text(errors="replace").strip()
        return f"its log ({self.log_path}) ends: {text[-1500:]}" if text else "its log is empty"

    def make(self, *, rest: bool = False, agent_id: str = "", **options: Any) -> JsAgent:
        """A new agent with the Python agent's options; `rest=True` gives it an HTTP+JSON card (no JSON-RPC);
        `agent_id`: its id, so its URL, where a restarted host must serve it again (else a new one)."""
        opts = AgentOptions(**options)  # a typo in an option name fails here
        default = AgentOptions()
        used = [name for name in self.sdk.unsupported if getattr(opts, name) != getattr(default, name)]
        if used:
            raise ValueError(f"the {self.sdk.name} test agent does not offer {', '.join(used)}")
        body = {
            "name": opts.name,
            "description": opts.description,
            "key": opts.key,
            "bearerOnly": opts.bearer_only,
            "streaming": opts.streaming,
            "push": opts.push,
            "extended": opts.extended,
            "messageOnly": opts.message_only,
            "binding": "HTTP+JSON" if rest else "JSONRPC",
            "interfaceUrl": opts.interface_url,
            "decoyInterface": opts.decoy_interface,
            "cancelAnswer": opts.cancel_answer,
            "safePushUrls": opts.safe_push_urls,
            "listTasks": opts.list_tasks,
        }
        if agent_id:
            body["id"] = agent_id
        made = self.control.post("/agents", json=body).raise_for_status().json()
        return JsAgent(self, made["id"], made["url"], opts)

    def stop(self) -> None:
        control = getattr(self, "control", None)
        if control is not None:
            control.close()
        if self.proc.stdin is not None:
            self.proc.stdin.close()  # the agent exits on its own when stdin closes
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._log.close()


class JsAgent:
    """One agent in the JS host; its recordings are read from the process on each access."""

    __test__ = False

    def __init__(self, host: JsAgentHost, agent_id: str, url: str, options: AgentOptions) -> None:
        self.host, self.id, self.url, self.options = host, agent_id, url, options
        self.sdk = host.sdk.name  # "js", "js03"
        self._cancel_answer = options.cancel_answer

    def __repr__(self) -> str:
        return f"JsAgent({self.url})"

    def _state(self) -> dict[str, Any]:
        return self.host.control.get(f"/agents/{self.id}").raise_for_status().json()

    @property
    def received(self) -> list[Received]:
        return [
            Received(r["text"], r["parts"], r["metadata"], r["headers"], r["taskId"], r["contextId"])
            for r in self._state()["received"]
        ]

    @property
    def requests(self) -> list[tuple[str, str, dict[str, str]]]:
        return [(m, p, h) for m, p, h in self._state()["requests"]]

    @property
    def methods(self) -> list[str]:
        return list(self._state()["methods"])

    @property
    def wire_methods(self) -> list[str]:
        """The methods as they came on the wire (the 0.3 agent's `tasks/get`; the 1.3 agent records none)."""
        return list(self._state().get("wire", []))

    @property
    def finished(self) -> list[str]:
        return list(self._state()["finished"])

    def release(self, name: str) -> None:
        """Let every `hold <name>` task complete."""
        self.host.control.post(f"/agents/{self.id}/release/{name}").raise_for_status()

    @property
    def cancel_answer(self) -> str:
        return self._cancel_answer

    @cancel_answer.setter
    def cancel_answer(self, answer: str) -> None:
        """How CancelTask answers from now on (as `TestAgent.cancel_answer`)."""
        self.host.control.post(f"/agents/{self.id}/cancel-answer", json={"answer": answer}).raise_for_status()
        self._cancel_answer = answer

    def forget(self) -> None:
        """Drop every task, as a restart with an in-memory store does."""
        self.host.control.post(f"/agents/{self.id}/restart").raise_for_status()

    def stop(self) -> None:
        """Release its gates, end its running work and drop it (its URL answers 404 from then on)."""
        if self.host.proc.poll() is None:
            self.host.control.delete(f"/agents/{self.id}")


SdkAgent = TestAgent | JsAgent
"""An agent on either SDK: the tests that must hold on both take this."""
