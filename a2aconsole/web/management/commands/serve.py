"""`manage.py serve`: the embedded default. One process: migrations, daphne (HTTP + WebSocket), the worker.

Daphne does not run ASGI lifespan events, so the background work (`a2aconsole.web.process.background`) is started
here once daphne listens, on daphne's own event loop, and stopped before the reactor shuts down
(SIGINT / SIGTERM, handled by Twisted).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from a2aconsole import data_folder
from a2aconsole.core.config import ClientSettings
from a2aconsole.web import bootstrap, owner

log = logging.getLogger("a2aconsole.serve")

STOP_TIMEOUT_SECONDS = 15.0


def describe_client(client: ClientSettings) -> str:
    """One line saying whether the A2A client is on, and with what."""
    if not client.enabled:
        return "A2A client: off (A2AClient__Enabled=false): no tasks are sent and no watches are armed"
    push = f"push to {client.push_base_url}" if client.push_base_url else "no push (A2AClient__PushBaseUrl unset)"
    return f"A2A client: on (wait {client.wait_seconds:g} s, watch timeout {client.watch_timeout:g} s, {push})"


def describe_data_folder(folder: Path) -> str:
    """The data folder, with a warning when other users may read it (settings could not tighten it)."""
    if data_folder.is_private(folder):
        return f"data folder: {folder}"
    return (
        f"data folder: {folder} (WARNING: other users can enter it and it is not ours to change:"
        " make it owned by this user and chmod 700)"
    )


def setup_link(served_url: str, token: str) -> str:
    """The one-time link, on the public URL when there is one (behind a proxy the bound address may not work)."""
    return f"{settings.PUBLIC_URL or served_url}/setup/{token}/"


def _endpoint(host: str, port: int) -> str:
    return f"tcp:port={port}:interface={host.replace(':', chr(92) + ':')}"


def _url(host: str, port: int) -> str:
    shown = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    if ":" in shown:
        shown = f"[{shown}]"
    return f"http://{shown}:{port}"


class Command(BaseCommand):
    help = "Apply migrations and serve the console (HTTP + WebSocket) with the embedded watch worker."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
        parser.add_argument("--port", type=int, default=8000, help="TCP port (default 8000; 0 picks a free one)")

    def say(self, line: str) -> None:
        self.stdout.write(line)
        self.stdout.flush()

    def handle(self, *args: Any, host: str, port: int, **options: Any) -> None:
        with bootstrap.start_lock():  # web processes started together take turns
            call_command("migrate", interactive=False, verbosity=0)
            workspace = bootstrap.ensure_workspace_dir()
            bootstrap.ensure_console_target()
            setup_token = self._owner()
        self.say(f"workspace: {workspace}")
        self.say(describe_data_folder(Path(settings.DATA_DIR)))
        self.say(describe_client(settings.A2A_CLIENT))
        self._serve(host, port, setup_token)

    def _owner(self) -> str | None:
        """Make sure the owner can log in; returns a setup token when the first visitor must create it."""
        if owner.owner_exists():
            owner.discard_setup_token()
            return None
        if settings.OWNER_PASSWORD:
            try:
                owner.create_owner(owner.OWNER_USERNAME, settings.OWNER_PASSWORD)
            except ValidationError as e:
                raise CommandError(
                    f"A2ACONSOLE_OWNER_PASSWORD: expected a password that passes the checks: {' '.join(e.messages)}",
                    returncode=2,
                ) from None
            self.say(f"owner account: created {owner.OWNER_USERNAME!r} from A2ACONSOLE_OWNER_PASSWORD")
            return None
        return owner.issue_setup_token()

    def _serve(self, host: str, port: int, setup_token: str | None) -> None:
        # at serve time, not when manage.py lists its commands: daphne installs twisted's asyncio reactor before
        # anything imports one, and the ASGI application is built once, here
        from twisted.internet import defer, reactor

        from a2aconsole.asgi import application
        from a2aconsole.web.process import background
        from a2aconsole.web.server import Server

        started: dict[str, asyncio.Task[None]] = {}

        def ready() -> None:
            if not server.listening_addresses:
                return
            bound_port = server.listening_addresses[0][1]
            url = _url(host, bound_port)
            self.say(f"a2aconsole is serving on {url}/ (Ctrl-C stops it)")
            if setup_token:
                self.say(f"first run: open {setup_link(url, setup_token)} to create the owner account (works once)")
            loop = asyncio.get_event_loop()
            started["task"] = loop.create_task(background.start())
            started["task"].add_done_callback(_report_start)
            reactor.addSystemEventTrigger(
                "before", "shutdown", lambda: defer.Deferred.fromFuture(loop.create_task(_stop()))
            )

        def _report_start(task: asyncio.Task[None]) -> None:
            if not task.cancelled() and task.exception() is not None:
                log.error("background work failed to start", exc_info=task.exception())

        async def _stop() -> None:
            task = started.get("task")
            if task is not None and not task.done():
                task.cancel()
                # a cancellation of this stop itself is swallowed too, on purpose: the background work must be
                # stopped below all the same (Twisted's shutdown waits for it)
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            try:
                await asyncio.wait_for(background.stop(), STOP_TIMEOUT_SECONDS)
            except Exception:
                log.exception("background work did not stop cleanly")

        # A background job of a script starts with SIGINT ignored, and Twisted then leaves it ignored; the
        # console is a server asked to stop by SIGINT too (tests, supervisors), so it always listens for it.
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        server = Server(
            application=application,
            endpoints=[_endpoint(host, port)],
            ready_callable=ready,
            verbosity=0,
        )
        server.run()
        if not server.listening_addresses:
            raise CommandError(f"could not listen on {host}:{port} (is the port in use?)", returncode=2)
        self.say("a2aconsole stopped")
