"""Agents that refused a push config, and what their watches follow instead: one entry per agent, in memory.

Agents' SDKs refuse push URLs on loopback and private addresses (SSRF guards): `CreateTaskPushNotificationConfig`
then fails, and the watch falls back to the stream or polling. The owner should read why once per agent, not once
per watch, so the registry keeps the latest refusal of each agent here (bounded; the reason scrubbed and cut by the
follower) and forgets it once a push config of that agent is accepted.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime

from a2aconsole.core.watches.heard import reason

MAX_AGENTS = 200  # agents remembered at most (the oldest refusal is forgotten first)
FALLBACK_WORDS = {"subscribe": "stream", "poll": "polling"}


@dataclass(frozen=True)
class PushRefusal:
    """An agent's refusal of a push config: its reason (as the agent said it), the source followed instead, when."""

    workspace: str
    agent: str
    reason: str
    source: str
    at: datetime

    @property
    def text(self) -> str:
        """`push refused by the agent: <reason>; following by polling` (the source its watch fell back to)."""
        return self.said(self.source)

    def said(self, source: str) -> str:
        """The refusal as a watch row says it, with the source that watch follows now (a stream that failed 3 times
        went on polling since)."""
        return f"push refused by the agent: {self.reason}; following by {FALLBACK_WORDS.get(source, source)}"


def refusal_reason(error: str, action: str = "push setup") -> str:
    """The agent's own words in a failed call's text (`agent "x" answered an error to push setup: InvalidParams: …`
    -> `InvalidParams: …`), on one line, cut to `heard.ERROR_CHARS`."""
    marker = f"{action}: "
    said = error.split(marker, 1)[1] if marker in error else error
    return reason(said)


class PushRefusals:
    """The latest refusal per (workspace, agent), at most MAX_AGENTS."""

    def __init__(self, limit: int = MAX_AGENTS) -> None:
        self.limit = limit
        self._by_agent: OrderedDict[tuple[str, str], PushRefusal] = OrderedDict()

    def refused(self, refusal: PushRefusal) -> None:
        key = (refusal.workspace, refusal.agent)
        self._by_agent.pop(key, None)
        self._by_agent[key] = refusal
        while len(self._by_agent) > self.limit:
            self._by_agent.popitem(last=False)

    def accepted(self, workspace: str, agent: str) -> None:
        """A push config of the agent was accepted: its refusal is over."""
        self._by_agent.pop((workspace, agent), None)

    def of(self, workspace: str, agent: str) -> PushRefusal | None:
        return self._by_agent.get((workspace, agent))

    def all(self) -> list[PushRefusal]:
        """Every agent's refusal, by agent name."""
        return sorted(self._by_agent.values(), key=lambda r: (r.agent, r.workspace))

    def __len__(self) -> int:
        return len(self._by_agent)
