"""The console's metric families, beside the core's in `core.metrics.REGISTRY`.

Counters and gauges are changed where things happen (a delivery, a push receipt, a socket opening);
the watches are read from the live registries at scrape time (`WatchCollector`), so the numbers are
never out of step with the watch table. Watch ids and task ids are never labels.
"""

from __future__ import annotations

import functools
from collections import Counter as Tally
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from django.http import HttpRequest, HttpResponse
from prometheus_client import Counter, Gauge
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from a2aconsole.core.metrics import REGISTRY

DELIVERIES = Counter(
    "a2aconsole_deliveries",
    "Results handed to a chat target's backend, by backend and outcome (delivered, or failed: kept for a retry).",
    ["backend", "outcome"],
    registry=REGISTRY,
)
DELIVERY_RETRIES = Counter(
    "a2aconsole_delivery_retries",
    "Deliveries of a result whose earlier delivery by this process failed, by backend.",
    ["backend"],
    registry=REGISTRY,
)
PUSH_RECEIPTS = Counter(
    "a2aconsole_push_receipts",
    "Push notifications received at /a2a/push/<watchId>, by the HTTP status answered.",
    ["answer"],
    registry=REGISTRY,
)
WEBSOCKET_CLIENTS = Gauge(
    "a2aconsole_websocket_clients",
    "Console tabs connected over WebSocket to this process, by page.",
    ["page"],
    registry=REGISTRY,
)


def counted_push(view: Callable[..., Awaitable[HttpResponse]]) -> Callable[..., Awaitable[HttpResponse]]:
    """Count each answer of the (async) push receiver by its status code."""

    @functools.wraps(view)
    async def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = await view(request, *args, **kwargs)
        PUSH_RECEIPTS.labels(str(response.status_code)).inc()
        return response

    return wrapper


class DeliveryCount:
    """Counts one delivery outcome; a delivery of a watch whose last delivery failed here is a retry."""

    MAX_REMEMBERED = 10_000  # watch ids whose delivery failed; beyond this, older failures are forgotten

    def __init__(self) -> None:
        self._failed: set[str] = set()

    def __call__(self, backend: str, ok: bool, watch_id: str = "") -> None:
        if watch_id and watch_id in self._failed:
            DELIVERY_RETRIES.labels(backend).inc()
        DELIVERIES.labels(backend, "delivered" if ok else "failed").inc()
        if not watch_id:
            return
        if ok:
            self._failed.discard(watch_id)
        else:
            if len(self._failed) >= self.MAX_REMEMBERED:
                self._failed.clear()
            self._failed.add(watch_id)


class WatchCollector(Collector):
    """`a2aconsole_watches{source,state}`: the watches this process follows now, read at scrape time.

    Only a process that runs a watch registry (the embedded `serve`, a `runworker a2a-watches`) has
    any; a scale-out web process reports none (its watches are the worker's). `tally` counts them now (the
    runtime module registers one over its runtimes)."""

    def __init__(self, tally: Callable[[], Tally[tuple[str, str]]]) -> None:
        self._tally = tally

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            "a2aconsole_watches",
            "Watches this process follows now, by source (push, subscribe, poll) and last known task state.",
            labels=["source", "state"],
        )
        for (source, state), n in sorted(self._tally().items()):
            family.add_metric([source, state], n)
        yield family
