"""The process's Prometheus metrics: one registry, and the families the core itself counts.

Each process (the embedded `serve`, every web process and worker of a scale-out) has its own registry
and answers for itself; Prometheus scrapes each one and sums. The web side adds its families (deliveries,
push receipts, WebSocket clients) and a collector that reads the live watches at scrape time to the same
`REGISTRY`. Labels are bounded: agent names (from agents.json), method names, workspace paths, backend
names; never a task id, a watch id, a URL or a key.
"""

from __future__ import annotations

import time
from collections import deque
from functools import lru_cache
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector

from a2aconsole.core.errors import A2AConsoleError

REGISTRY = CollectorRegistry()
ProcessCollector(registry=REGISTRY)
PlatformCollector(registry=REGISTRY)
GCCollector(registry=REGISTRY)


class _FoldedHistogram(Histogram):
    """A histogram whose observations made by `remote_call` are folded in when it is read (`fold`)."""

    def collect(self) -> Any:
        fold()
        return super().collect()


REMOTE_CALL_SECONDS = _FoldedHistogram(
    "a2aconsole_remote_call_seconds",
    "How long a call to a remote agent took, by agent and method (failures included).",
    ["agent", "method"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
    registry=REGISTRY,
)
REMOTE_CALL_FAILURES = Counter(
    "a2aconsole_remote_call_failures",
    "Remote calls that failed, by agent, method and kind of failure (network, timeout, auth, ...).",
    ["agent", "method", "kind"],
    registry=REGISTRY,
)
LEASE_HELD = Gauge(
    "a2aconsole_worker_lease_held",
    "1 when this process holds the worker lease of the workspace (runs its watches); 0 when it does not "
    "(another process held it when this one tried, or this one gave it back). Summed over processes: 1.",
    ["workspace"],
    registry=REGISTRY,
)


# Remote calls timed and not yet in the histogram: an append is all a call pays (an observation, with its
# locks, was a share of each send's overhead, tests/bench/send_overhead.py); folded in when the registry
# is read (a scrape), or once FOLD_AT wait. A deque: the event loop appends while a scrape's thread may fold.
_timed: deque[tuple[str, str, float]] = deque()
FOLD_AT = 1000


def fold() -> None:
    """Put the remote calls timed so far into the histogram."""
    while True:
        try:
            agent, method, seconds = _timed.popleft()
        except IndexError:
            return
        _call_timer(agent, method).observe(seconds)


@lru_cache(maxsize=4096)
def _call_timer(agent: str, method: str) -> Any:
    """The histogram's child for (agent, method), looked up once: `labels()` builds and locks on every call, a
    share of each send's overhead (tests/bench/send_overhead.py). Bounded like the labels themselves."""
    return REMOTE_CALL_SECONDS.labels(agent, method)


def remote_call(agent: str, method: str) -> RemoteCallTimer:
    """Time one remote call (`with metrics.remote_call(agent, method):`); a failure is also counted by its kind
    (RemoteError's). A cancelled call (the watch stopped, the process is ending) is neither timed nor counted."""
    return RemoteCallTimer(agent, method)


def call_ended(agent: str, method: str, seconds: float, failure: str | None = None) -> None:
    """Note one remote call that took `seconds`; `failure`: the kind it failed with (None: it did not)."""
    if failure is not None:
        REMOTE_CALL_FAILURES.labels(agent, method, failure).inc()
    _timed.append((agent, method, seconds))
    if len(_timed) >= FOLD_AT:
        fold()


class RemoteCallTimer:
    """`remote_call`'s context: a class, not a generator."""

    __slots__ = ("agent", "method", "start", "told")

    def __init__(self, agent: str, method: str) -> None:
        self.agent, self.method = agent, method
        self.start = 0.0
        self.told = True

    def __enter__(self) -> RemoteCallTimer:
        self.start = time.perf_counter()
        return self

    def untold(self) -> None:
        """The caller stopped waiting (its own bound ran out): the call is neither timed nor counted."""
        self.told = False

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if not self.told or (exc_type is not None and not issubclass(exc_type, Exception)):
            return  # the caller stopped waiting; or cancelled, or the process ends
        call_ended(self.agent, self.method, time.perf_counter() - self.start, failure_kind(exc))


def failure_kind(exc: BaseException | None) -> str | None:
    """What a failed call is counted as: its RemoteError's kind, else "other" (None: no failure)."""
    if exc is None:
        return None
    return str(getattr(exc, "kind", "") or "other") if isinstance(exc, A2AConsoleError) else "other"


def lease_held(workspace: str, held: bool) -> None:
    """Record whether this process holds the lease of `workspace` (its folder path, never a key)."""
    LEASE_HELD.labels(workspace).set(1 if held else 0)
