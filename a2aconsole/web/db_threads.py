"""The console's database threads: the short ORM work of the API, the event sink and the live tabs' renders, on
connections kept open.

Django runs an async view's ORM calls (`aget`, `sync_to_async`) in a thread made for that one request (asgiref's
ThreadSensitiveContext), so every request opens a database connection and closes it at its end; work outside a
request (the event sink, deliveries) queues on asgiref's one shared thread, behind whatever else was sent there.
A persistent connection (CONN_MAX_AGE) would not help either: the request's thread, hence its connection, is
gone after the request. So the work that is on the path of every API call and every push runs here instead: a
few long-lived threads, each keeping its own connection (SQLite and PostgreSQL both allow one per thread) between
jobs. A connection is dropped (the next job opens a new one) when a job left it broken or in a changed
autocommit mode, and after KEEP_SECONDS, so a restarted database server or a moved SQLite file is picked up;
with CONN_HEALTH_CHECKS (PostgreSQL) a kept connection is checked before each job. On the tests' shared-cache
in-memory SQLite nothing is kept and `run` goes where Django's own async ORM calls go (`_pooled`).

The live tabs' renders (`render`) have threads of their own: a burst of renders never queues ahead of a push's
event insert. They used channels' `database_sync_to_async`, which closes the connection after every call: ten
tabs, four renders a second each, opened and closed 40 SQLite connections a second (14% of the console's CPU
under `tests/bench/push_to_row.py --tabs 10`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from asgiref.sync import sync_to_async

T = TypeVar("T")

DB_THREADS = 4
RENDER_THREADS = 2  # renders hold the GIL nearly throughout: more threads would only wait for it
KEEP_SECONDS = 300.0

_pool = concurrent.futures.ThreadPoolExecutor(DB_THREADS, thread_name_prefix="a2a-db")
_render_pool = concurrent.futures.ThreadPoolExecutor(RENDER_THREADS, thread_name_prefix="a2a-render")
_local = threading.local()  # per thread: {alias: (id of the raw connection, when it was first seen)}


def _tidy() -> None:
    """Drop this thread's connections that are broken, left in a changed mode, or older than KEEP_SECONDS."""
    from django.db import connections

    seen: dict[str, tuple[int, float]] = _local.__dict__.setdefault("seen", {})
    for conn in connections.all(initialized_only=True):
        tidy(conn, seen, time.monotonic())


def tidy(conn: Any, seen: dict[str, tuple[int, float]], now: float) -> bool:
    """Keep `conn` for the next job (True) or close it; `seen` remembers when each alias's connection was opened."""
    raw = conn.connection
    if raw is None:
        return False
    first = seen.get(conn.alias)
    if first is None or first[0] != id(raw):
        first = seen[conn.alias] = (id(raw), now)
    stale = now - first[1] >= KEEP_SECONDS or _shared_memory(conn)  # see _pooled
    changed = conn.in_atomic_block or conn.get_autocommit() != conn.settings_dict["AUTOCOMMIT"]
    if stale or changed or (conn.errors_occurred and not conn.is_usable()):
        conn.close()
        seen.pop(conn.alias, None)
        return False
    conn.errors_occurred = False
    conn.health_check_done = False  # with CONN_HEALTH_CHECKS, the next job checks it first (PostgreSQL: a server
    return True  # that dropped an idle connection costs a reconnect, not a failed call)


def _shared_memory(conn: Any) -> bool:
    """A shared-cache in-memory SQLite database (the tests'): there one connection's write makes another's fail at
    once ("database table is locked") instead of waiting for it."""
    return conn.vendor == "sqlite" and conn.is_in_memory_db()


def _job(fn: Callable[..., T], args: tuple[Any, ...]) -> T:
    try:
        return fn(*args)
    finally:
        _tidy()


def _pooled() -> bool:
    """Whether the pool serves: not on a shared-cache in-memory database (the tests'), where connections of other
    threads writing at the same moment fail at once, so the work goes where Django's own async ORM calls go."""
    from django.db import connections

    return not _shared_memory(connections["default"])


async def run(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` in a database thread (its connection kept for the next job), awaited from the loop."""
    if not _pooled():
        return await sync_to_async(fn)(*args)
    return await asyncio.get_running_loop().run_in_executor(_pool, _job, fn, args)


async def render(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` in a render thread (its connection kept), awaited from the loop. Unpooled (the tests' in-memory
    database) it runs outside the thread of Django's sync views, as channels' `database_sync_to_async` ran it."""
    if not _pooled():
        return await sync_to_async(fn, thread_sensitive=False)(*args)
    return await asyncio.get_running_loop().run_in_executor(_render_pool, _job, fn, args)
