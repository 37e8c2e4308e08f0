"""The metrics port of a process that serves no HTTP: `runworker a2a-watches` with `A2ACONSOLE_METRICS_PORT`.

A worker runs the watches, deliveries and leases of a scale-out, so its numbers live in its own process;
this small threaded server (prometheus-client's WSGI app behind the same access rules as the console's
`/metrics`) lets Prometheus scrape it, and answers `/healthz` for a container healthcheck.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

from prometheus_client import make_wsgi_app
from prometheus_client.exposition import ThreadingWSGIServer

from a2aconsole.core.metrics import REGISTRY
from a2aconsole.core.metrics_access import MetricsAccess
from a2aconsole.web import metrics as _families  # noqa: F401  (registers the console's families

log = logging.getLogger(__name__)

StartResponse = Callable[..., Any]


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # every scrape is not news
        pass


class MetricsServer:
    """`start()` listens (port 0 picks one: see `port`) in a daemon thread; `stop()` is idempotent."""

    def __init__(self, access: MetricsAccess, host: str, port: int) -> None:
        self.access = access
        self._metrics = make_wsgi_app(REGISTRY)
        self._httpd = make_server(host, port, self._app, ThreadingWSGIServer, handler_class=_QuietHandler)
        self.port = self._httpd.server_port
        self._thread: threading.Thread | None = None

    def start(self) -> MetricsServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="a2a-metrics", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def _app(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == "/healthz":
            return _plain(start_response, "200 OK", "ok\n")
        if path != "/metrics":
            return _plain(start_response, "404 Not Found", "not found\n")
        status = self.access.answer(environ.get("REMOTE_ADDR"), environ.get("HTTP_AUTHORIZATION"))
        if status == 404:
            return _plain(start_response, "404 Not Found", "not found\n")
        if status == 403:
            return _plain(start_response, "403 Forbidden", "metrics are not served to this address\n")
        if status == 401:
            return _plain(
                start_response,
                "401 Unauthorized",
                "metrics need the bearer token\n",
                [("WWW-Authenticate", 'Bearer realm="metrics"')],
            )
        return self._metrics(environ, start_response)


def _plain(
    start_response: StartResponse, status: str, text: str, extra: list[tuple[str, str]] | None = None
) -> list[bytes]:
    start_response(status, [("Content-Type", "text/plain; charset=utf-8"), *(extra or [])])
    return [text.encode()]


def start_metrics_server(access: MetricsAccess, listen: tuple[str, int] | None) -> MetricsServer | None:
    """Start the port when `A2ACONSOLE_METRICS_PORT` asks for one (an OSError, e.g. the port in use, stops)."""
    if listen is None:
        return None
    server = MetricsServer(access, *listen).start()
    if not access.enabled:
        log.warning(
            "A2ACONSOLE_METRICS_PORT is set but neither A2ACONSOLE_METRICS_TOKEN nor A2ACONSOLE_METRICS_ALLOW: "
            "/metrics answers 404 (only /healthz is served)"
        )
    log.info("metrics on http://%s:%d/metrics", listen[0], server.port)
    return server
