"""Every A2A implementation the console is tested against, in one list: the matrix (tests/core/tool/test_matrix.py)
runs its scenarios against each, and docs/tool.md's compatibility table is checked against the quirks named here.

An entry names the pytest fixture that makes its agents: a factory `make(**options)` taking the Python test agent's
options (tests/support/agents.py `AgentOptions`, those it offers) and returning an agent with `url`, `methods`,
`release(gate)`, `stop()` (`TestAgent`, `JsAgent` and the agents that look like them). Adding an implementation is
one entry here (and its fixture in tests/conftest.py), as `@a2a-js/sdk` 0.3's:

    Implementation("js03", "make_js03_agent", "@a2a-js/sdk 0.3", protocol="0.3", quirks=frozenset({...}))

A **quirk** is a named wire behaviour that differs from the plain 1.0 one the matrix expects; each is asserted as
what the agent does (QUIRKS says what each means) and is a row of docs/tool.md's compatibility table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# quirk -> what the agent does (the matrix asserts it; docs/tool.md's compatibility table has a row for each)
QUIRKS = {
    "subscribe-starts-without-task": "SubscribeToTask streams the task's events from then on, not the task first",
    "subscribe-idle-not-found": "SubscribeToTask answers task-not-found for a task with no work running "
    "(one asking a question)",
    "subscribe-terminal-invalid-params": "SubscribeToTask to a settled task answers invalid params (1.0: "
    "unsupported operation)",
    "subscribe-refusal-breaks-stream": "a refused SubscribeToTask (no work running, a settled task) breaks the "
    "connection after the stream began (HTTP 200), instead of an error answer",
    "subscribe-get-only": "SubscribeToTask (`/v1/tasks/{id}:subscribe`) is served by GET only; POST answers 405",
    "subscribe-terminal-snapshot": "SubscribeToTask to a settled task sends the task and ends",
    "stream-ends-after-snapshot": "SubscribeToTask sends the task and ends the stream, the task still working",
    "history-length-0-all": "`historyLength: 0` is read as no limit: the whole history comes back",
    "unknown-method-http-500": "an unknown JSON-RPC method is answered HTTP 500, not -32601 (method not found)",
    "new-task-per-message": "every message is a new task: a follow-up's `taskId` is ignored",
    "cancel-answers-working": "CancelTask is answered with the task still working; it is canceled soon after",
    "naive-timestamps": "status timestamps carry no time zone",
    "reply-at-first-event": "SendMessage (`blocking: false`) is answered at the agent's first event, with the task "
    "as that event left it (`working`), not at once with the task `submitted`",
    "status-without-timestamp": "a task's status carries no timestamp; a follow-up's reply shows the task still "
    "asking, its question moved into the history (no status message)",
}


@dataclass(frozen=True)
class Implementation:
    """One implementation as the matrix runs it: `name` is the test id."""

    name: str
    fixture: str  # the factory fixture: make(**options) -> agent
    label: str  # as docs/tool.md's table names it
    protocol: str = "1.0"
    options: dict[str, Any] = field(default_factory=dict)  # given to every agent made (rest=True: HTTP+JSON)
    push: bool = True  # its agents can take push notifications
    options_offered: bool = True  # its agents take `streaming=` / `push=` (a stock fasta2a app does not)
    quirks: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        unknown = self.quirks - QUIRKS.keys()
        assert not unknown, f"{self.name}: quirks not in QUIRKS: {unknown}"


IMPLEMENTATIONS = [
    Implementation("python", "make_agent", "a2a-sdk 1.3"),
    Implementation("python-rest", "make_agent", "a2a-sdk 1.3", options={"rest": True}),
    Implementation("js", "make_js_agent", "@a2a-js/sdk 1.3"),
    Implementation("js-rest", "make_js_agent", "@a2a-js/sdk 1.3", options={"rest": True}),
    Implementation(
        "py03",
        "make_py03_agent",
        "a2a-sdk 0.3",
        protocol="0.3",
        quirks=frozenset(
            {
                "subscribe-starts-without-task",
                "subscribe-idle-not-found",
                "subscribe-terminal-invalid-params",
                "history-length-0-all",
            }
        ),
    ),
    Implementation(
        "py03-rest",
        "make_py03_agent",
        "a2a-sdk 0.3",
        protocol="0.3",
        options={"rest": True},
        quirks=frozenset(
            {
                "subscribe-starts-without-task",
                "subscribe-refusal-breaks-stream",
                "subscribe-get-only",
                "history-length-0-all",
                "status-without-timestamp",
            }
        ),
    ),
    Implementation(
        "js03",
        "make_js03_agent",
        "@a2a-js/sdk 0.3",
        protocol="0.3",
        quirks=frozenset({"history-length-0-all", "subscribe-terminal-snapshot", "reply-at-first-event"}),
    ),
    Implementation(
        "js03-rest",
        "make_js03_agent",
        "@a2a-js/sdk 0.3",
        protocol="0.3",
        options={"rest": True},
        quirks=frozenset({"history-length-0-all", "subscribe-terminal-snapshot", "reply-at-first-event"}),
    ),
    Implementation(
        "fasta2a",
        "make_fasta2a_agent",
        "fasta2a 2.1",
        push=False,
        options_offered=False,
        quirks=frozenset(
            {
                "history-length-0-all",
                "subscribe-terminal-snapshot",
                "unknown-method-http-500",
                "new-task-per-message",
                "cancel-answers-working",
                "naive-timestamps",
            }
        ),
    ),
]
BY_NAME = {i.name: i for i in IMPLEMENTATIONS}
