"""Benchmark: a send through the JSON API (`POST /api/v1/targets/<id>/tool`) against the bare a2a-sdk client.

    .venv/bin/python -m tests.bench.api_send [N] [--tab] [--host] [--key]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<a new, empty database> .venv/bin/python -m tests.bench.api_send

A real console (`manage.py serve`: daphne, the embedded worker, SQLite in its data folder) and a real Python
a2a-sdk agent, each in its own process. The bench makes an API token for the console's chat target, then
times N sends (default 200) each way, interleaved in a shuffled order so both see the same conditions:

- api: the host's call, an HTTP POST of `{"action": "send", ...}` over a kept-alive connection, answered with
  the task's result (the agent completes at once);
- bare: the SDK doing the tool's wire calls itself, `SendMessage(returnImmediately)` + `GetTask` until the task is
  completed (a GetTask that finds it still submitted or working has no answer yet, so it asks again, as the tool
  does), over a client built once from the card (what `tests/bench/send_overhead.py` calls the same-wire baseline).

Printed: p50/p99 of each, the ratio api / bare of the medians, the console's own work per send (api minus bare,
paired per round: the median of each round's difference), and the console process's CPU time per API send
(user + system: steadier than latency on a loaded machine; the bare sends cost the console nothing). With
`--tab`, a WebSocket client sits on the dashboard the whole time (every call's events make it render): renders
must not sit on the calls' path. With `--host`, the calls go to a chat target of their own (as a real agent
host's do) rather than the console's own. With `--key`, every call carries an `Idempotency-Key` of its own (a host
that retries safely): the key's claim and the kept answer are two more transactions.

Then, in this process, the same calls through the same ASGI application (its middleware, view, tool and
event sink) against the same database, with every SQL statement counted: statements, writes, write
transactions (commits) and new database connections per call, and the events stored per call; and a profile
of those calls (cProfile of the event loop's thread and of the database threads' jobs, merged): the console's
own work, by function, with the time the loop spent waiting (for the agent, for a database thread) left out.
"""

from __future__ import annotations

import asyncio
import cProfile
import os
import pstats
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TARGET = "console"  # `--host`: a chat target of its own ("bench", over the same workspace), as a real host has
KEYED = False  # `--key`: an Idempotency-Key on every call


def key_header() -> dict[str, str]:
    return {"Idempotency-Key": uuid.uuid4().hex} if KEYED else {}


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] * 1000


def issue_token() -> str:
    from a2aconsole.web.models import ApiToken, ChatTarget

    if TARGET == "console":
        target = ChatTarget.objects.get(pk=TARGET)
    else:
        console = ChatTarget.objects.get(pk="console")
        target = ChatTarget.objects.create(id=TARGET, name="Bench host", workspace=console.workspace)
    _, token = ApiToken.issue(target, "bench")
    return token


def owner_session() -> str:
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.contrib.sessions.backends.db import SessionStore

    user = get_user_model().objects.get(username="owner")
    s = SessionStore()
    s[SESSION_KEY], s[BACKEND_SESSION_KEY] = str(user.pk), "django.contrib.auth.backends.ModelBackend"
    s[HASH_SESSION_KEY] = user.get_session_auth_hash()
    s.create()
    return s.session_key or ""


async def open_tab(ws_url: str, http_url: str, session: str, frames: list[int]) -> None:
    """A dashboard tab: counts the frames it gets until cancelled."""
    import websockets

    headers = {"Cookie": f"sessionid={session}", "Origin": http_url}
    async with websockets.connect(f"{ws_url}/ws/console/dashboard/", additional_headers=headers, max_size=None) as s:
        async for _ in s:
            frames[0] += 1


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def over_the_wire(n: int, server: Any, agent_url: str, token: str, tab: str | None) -> None:
    console_url = server.url
    import httpx
    from a2a.client import ClientConfig, ClientFactory
    from a2a.types import (
        GetTaskRequest,
        Message,
        Part,
        Role,
        SendMessageConfiguration,
        SendMessageRequest,
        TaskState,
    )

    from a2aconsole.core.files.workspace import Workspace
    from a2aconsole.core.remote.client import BINDINGS, Remote
    from a2aconsole.core.remote.http import new_http_client
    from a2aconsole.core.tool.tool import HOPS_KEY

    api = httpx.AsyncClient(base_url=console_url, headers={"Authorization": f"Bearer {token}"}, timeout=60)
    bare_http = new_http_client()
    ws = Workspace(tempfile.mkdtemp(prefix="a2a-bench-bare-"))
    ws.save_agents([{"name": "echo", "url": agent_url}], None)
    card = await Remote(bare_http).fetch_card(ws.read_agents().entries[0])
    client = ClientFactory(
        ClientConfig(httpx_client=bare_http, streaming=False, supported_protocol_bindings=BINDINGS)
    ).create(card.sdk_card)

    async def via_api(i: int) -> None:
        r = await api.post(
            f"/api/v1/targets/{TARGET}/tool",
            json={"action": "send", "agent": "echo", "message": f"hi {i}"},
            headers=key_header(),
        )
        assert r.status_code == 200 and r.json().get("state") == "completed", r.text

    extra_gets = [0]

    async def via_bare(i: int) -> None:
        """The tool's wire calls: the message as it sends it (its hop count in the metadata), returnImmediately,
        then GetTask until the answer is there."""
        msg = Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=f"hi {i}")])
        msg.metadata.update({HOPS_KEY: 1})
        req = SendMessageRequest(message=msg, configuration=SendMessageConfiguration(return_immediately=True))
        async for ev in client.send_message(req):
            task = ev.task
        while (await client.get_task(GetTaskRequest(id=task.id))).status.state != TaskState.TASK_STATE_COMPLETED:
            extra_gets[0] += 1

    frames = [0]
    tab_task = None
    if tab is not None:
        tab_task = asyncio.create_task(open_tab(console_url.replace("http", "ws", 1), console_url, tab, frames))
    for i in range(20):  # warm up connections and code paths
        await via_api(i)
        await via_bare(i)
    extra_gets[0] = 0
    times: dict[str, list[float]] = {"api": [], "bare": []}
    runs = {"api": via_api, "bare": via_bare}
    cpu = cpu_seconds(server.proc.pid)
    order = random.Random(1)
    for i in range(n):
        names = list(runs)
        order.shuffle(names)
        for name in names:
            t = time.perf_counter()
            await runs[name](i)
            times[name].append(time.perf_counter() - t)
    cpu = cpu_seconds(server.proc.pid) - cpu
    if tab_task is not None:
        if tab_task.done() and tab_task.exception() is not None:
            print(f"  the tab failed: {tab_task.exception()!r}")
        tab_task.cancel()
    await api.aclose()
    await bare_http.aclose()
    a, b = times["api"], times["bare"]
    print(f"{n} sends each way, interleaved; console {console_url}, agent {agent_url}{' , one live tab' * bool(tab)}")
    print(f"  api  send p50 {pct(a, 50):7.2f} ms   p99 {pct(a, 99):7.2f} ms")
    print(f"  bare send p50 {pct(b, 50):7.2f} ms   p99 {pct(b, 99):7.2f} ms  (returnImmediately + GetTask until done)")
    ratio = statistics.median(a) / statistics.median(b)
    print(f"  ratio api / bare (p50): {ratio:.2f}   (p99: {pct(a, 99) / pct(b, 99):.2f})")
    own = statistics.median(x - y for x, y in zip(a, b, strict=True)) * 1000
    print(f"  the console's own work per send (api minus bare, paired per round): {own:.2f} ms")
    print(f"  bare GetTasks that found no answer yet: {extra_gets[0]} in {n} sends (asked again at once)")
    print(f"  console CPU per api send: {cpu / n * 1000:.2f} ms (user + system, the bare sends cost it none)")
    if tab is not None:
        print(f"  the dashboard tab got {frames[0]} frames meanwhile")


class SqlCount:
    """Every SQL statement any thread runs, by verb, and the write transactions and connections opened."""

    def __init__(self) -> None:
        self.verbs: Counter[str] = Counter()
        self.commits = 0
        self.connections = 0
        self.lock = threading.Lock()

    @contextmanager
    def counting(self) -> Iterator[None]:
        from django.db.backends.base.base import BaseDatabaseWrapper
        from django.db.backends.signals import connection_created
        from django.db.backends.utils import CursorWrapper

        execute, executemany, commit = CursorWrapper._execute, CursorWrapper._executemany, BaseDatabaseWrapper._commit
        me = self

        def note(db: Any, sql: str) -> None:
            verb = sql.lstrip().split(None, 1)[0].upper() if sql.strip() else "?"
            with me.lock:
                me.verbs[verb] += 1
                if verb in ("INSERT", "UPDATE", "DELETE") and not db.in_atomic_block:
                    me.commits += 1  # autocommit: the statement is its own transaction

        def _execute(self: Any, sql: str, params: Any, *ignored: Any) -> Any:
            note(self.db, sql)
            return execute(self, sql, params, *ignored)

        def _executemany(self: Any, sql: str, param_list: Any, *ignored: Any) -> Any:
            note(self.db, sql)
            return executemany(self, sql, param_list, *ignored)

        def _commit(self: Any) -> Any:
            with me.lock:
                me.commits += 1
            return commit(self)

        def created(sender: Any, connection: Any, **kw: Any) -> None:
            with me.lock:
                me.connections += 1

        CursorWrapper._execute, CursorWrapper._executemany, BaseDatabaseWrapper._commit = (
            _execute,
            _executemany,
            _commit,
        )
        connection_created.connect(created, weak=False)
        try:
            yield
        finally:
            CursorWrapper._execute, CursorWrapper._executemany = execute, executemany
            BaseDatabaseWrapper._commit = commit
            connection_created.disconnect(created)


class Profile:
    """cProfile of the event loop's thread and of each database thread's jobs (`db_threads._job`), merged."""

    def __init__(self) -> None:
        self.profiles: list[cProfile.Profile] = []
        self.lock = threading.Lock()

    @contextmanager
    def profiling(self) -> Iterator[None]:
        from a2aconsole.web import db_threads

        job, local, me = db_threads._job, threading.local(), self

        def profiled(fn: Any, args: tuple[Any, ...]) -> Any:
            p = getattr(local, "profile", None)
            if p is None:
                p = local.profile = cProfile.Profile()
                with me.lock:
                    me.profiles.append(p)
            p.enable()
            try:
                return job(fn, args)
            finally:
                p.disable()

        db_threads._job = profiled
        loop = cProfile.Profile()
        self.profiles.append(loop)
        loop.enable()
        try:
            yield
        finally:
            loop.disable()
            db_threads._job = job

    def print(self, calls: int, top: int = 20) -> None:
        stats = pstats.Stats(self.profiles[0])
        for p in self.profiles[1:]:
            stats.add(p)
        table: dict[tuple[str, int, str], tuple[Any, ...]] = stats.stats  # type: ignore[attr-defined]
        waiting = {
            k
            for k in table
            if k[2] in ("<method 'poll' of 'select.epoll' objects>", "<method 'select' of 'select.epoll' objects>")
        }
        own = {k: v for k, v in table.items() if k not in waiting}
        total = sum(v[2] for v in own.values())
        by_part: Counter[str] = Counter()
        for (file, _, name), v in own.items():
            by_part[_part(file, name)] += v[2]
        print(
            f"  profile (cProfile, its own overhead included): {total / calls * 1000:.2f} ms of work per call, by part:"
        )
        print("    " + ", ".join(f"{part} {t / calls * 1000:.2f}" for part, t in by_part.most_common(10)))
        print(f"  top {top} functions by own time (ms per call; calls per call):")
        for (file, line, name), v in sorted(own.items(), key=lambda kv: -kv[1][2])[:top]:
            where = f"{_short(file)}:{line}" if line else _short(file)
            print(f"    {v[2] / calls * 1000:6.3f}  {v[1] / calls:6.1f}  {name}  {where}")


def _short(file: str) -> str:
    for marker in ("site-packages/", "wt-apisend/", "lib/python3"):
        if marker in file:
            return file.split(marker, 1)[1]
    return file.replace(str(ROOT) + "/", "")


def _part(file: str, name: str) -> str:
    """The package a function belongs to: a2aconsole's subpackage, a library, or the standard library."""
    if file == "~":
        return "sqlite3" if "sqlite3" in name else "builtins"
    if "site-packages/" in file:
        return file.split("site-packages/", 1)[1].split("/", 1)[0]
    if "/a2aconsole/" in file:
        return "a2aconsole/" + file.split("/a2aconsole/", 1)[1].split("/", 1)[0].removesuffix(".py")
    return "stdlib " + Path(file).stem


async def in_process(n: int, token: str) -> None:
    """The same calls through the ASGI app in this process, counting the SQL they cause."""
    import httpx
    from asgiref.sync import sync_to_async

    from a2aconsole.asgi import application
    from a2aconsole.web.models import TaskEvent
    from a2aconsole.web.process.runtime import close_runtime

    def events() -> int:
        return TaskEvent.objects.count()

    transport = httpx.ASGITransport(app=application)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as api:

        async def call(i: int) -> None:
            r = await api.post(
                f"/api/v1/targets/{TARGET}/tool",
                json={"action": "send", "agent": "echo", "message": f"counted {i}"},
                headers={"Authorization": f"Bearer {token}", **key_header()},
            )
            assert r.status_code == 200 and r.json().get("state") == "completed", r.text

        await call(-1)  # warm up
        await settle()
        count = SqlCount()
        before = await sync_to_async(events, thread_sensitive=False)()
        with count.counting():
            for i in range(n):
                await call(i)
            await settle()
        after = await sync_to_async(events, thread_sensitive=False)()
        profile = Profile()
        with profile.profiling():
            for i in range(n):
                await call(n + i)
        await settle()
    await close_runtime()
    total = sum(count.verbs.values())
    verbs = ", ".join(f"{v} {c / n:.1f}" for v, c in count.verbs.most_common())
    print(f"in process, {n} calls through the ASGI app: per call")
    print(f"  SQL statements {total / n:.1f} ({verbs})")
    print(f"  write transactions (commits) {count.commits / n:.1f}, new DB connections {count.connections / n:.1f}")
    print(f"  events stored {(after - before) / n:.1f}")
    profile.print(n)


async def settle() -> None:
    """Let writes deferred past the answer land (if any are)."""
    from a2aconsole.web import broadcast

    flush = getattr(broadcast, "flush", None)
    if flush is not None:
        await flush()
    await asyncio.sleep(0.2)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n = int(args[0]) if args else 200
    with_tab = "--tab" in sys.argv
    global TARGET, KEYED
    if "--host" in sys.argv:
        TARGET = "bench"
    KEYED = "--key" in sys.argv
    base = Path(tempfile.mkdtemp(prefix="a2a-bench-api-"))
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "a2aconsole.settings",
            "A2ACONSOLE_DATA": str(base / "data"),
            "A2ACONSOLE_WORKSPACE": str(base / "workspace"),
            "SECRET_KEY": "browser-tests-only",  # the one ConsoleServer gives the server: sessions match
        }
    )
    sys.path.insert(0, str(ROOT))
    from tests.bench.send_overhead import AGENT_PROCESS
    from tests.support.console_server import ConsoleServer

    agent = subprocess.Popen(
        [sys.executable, "-c", AGENT_PROCESS, "0", ""],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert agent.stdout is not None and agent.stdin is not None
    server = ConsoleServer(base)
    try:
        agent_url = agent.stdout.readline().strip()
        server.start(timeout=120)
        server.workspace.save_agents([{"name": "echo", "url": agent_url}], None)
        import django

        django.setup()
        token = issue_token()
        session = owner_session() if with_tab else None
        print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} (1/5/15 min)")
        asyncio.run(over_the_wire(n, server, agent_url, token, session))
        server.stop()
        asyncio.run(in_process(min(n, 50), token))
    finally:
        server.stop()
        agent.stdin.close()
        agent.wait(timeout=30)


if __name__ == "__main__":
    main()
