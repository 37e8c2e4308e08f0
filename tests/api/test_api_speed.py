"""What keeps an API send cheap (issue 12, bug 11), and that nothing it saves on is lost.

- a call's events are queued while it runs and written together before its answer leaves: all stored, each once,
  with calls running concurrently; one that fails to store does not take the others of its batch with it;
- a send commits once (its events and its task's row, in one transaction), and a send cut short by a failure keeps
  the events it emitted before it;
- an API call is not handed to another thread by the console's session middleware nor Django's request signals
  (api/handler.py), yet answers with the same security headers and host check;
- a console killed (SIGKILL) right after answering a call has the call's events in its database.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2aconsole.api import views
from a2aconsole.core.chat import ChatTarget as Chat
from a2aconsole.core.events import RESULT, SENT, Event
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web import broadcast
from a2aconsole.web.broadcast import ChannelsBroadcast, deferred_events
from a2aconsole.web.models import ChatTarget, TaskEvent, TaskRecord
from tests.support.agents import TestAgent
from tests.support.api_host import Host, make_host
from tests.support.asgi import asgi_client, count_thread_hops
from tests.support.console_server import ConsoleServer
from tests.support.runtime import fresh_runtime
from tests.support.toolkit import entry, write_agents

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
async def host(workspace: Workspace, make_agent: Callable[..., TestAgent]) -> AsyncIterator[Host]:
    """The `bot` target's host, with a plain agent `echo` in its workspace."""
    write_agents(workspace, entry("echo", make_agent()))
    async with fresh_runtime():
        yield await make_host(workspace)


async def _events(task_id: str) -> list[tuple[str, str]]:
    return [(e.kind, e.text) async for e in TaskEvent.objects.filter(task_id=task_id).order_by("id")]


async def test_concurrent_sends_store_every_event_once_before_answering(host: Host) -> None:
    stored_at_answer: dict[str, list[tuple[str, str]]] = {}

    async def send(i: int) -> dict[str, Any]:
        status, answer = await host.call({"action": "send", "agent": "echo", "message": f"call {i}"})
        assert status == 200 and answer["state"] == "completed"
        stored_at_answer[answer["taskId"]] = await _events(answer["taskId"])  # nothing flushed in between
        return answer

    answers = await asyncio.gather(*(send(i) for i in range(12)))
    assert len({a["taskId"] for a in answers}) == 12
    for a in answers:
        i = a["text"].removeprefix("echo: call ")
        kinds = [k for k, _ in stored_at_answer[a["taskId"]]]
        assert kinds.count(SENT) == 1 and kinds.count(RESULT) == 1, kinds  # all there when the answer came
        assert (SENT, f"call {i}") in stored_at_answer[a["taskId"]]
        await broadcast.flush()
        assert await _events(a["taskId"]) == stored_at_answer[a["taskId"]]  # and nothing came after, nor twice


def _event(kind: str, text: str, task_id: str = "t-1", **extra: Any) -> Event:
    from datetime import UTC, datetime

    return Event(kind, "/ws", "bot", task_id, datetime.now(UTC), target="console", text=text, **extra)


async def test_events_of_a_call_are_queued_and_written_in_one_transaction(monkeypatch) -> None:
    batches: list[int] = []
    real = broadcast._store_all

    def counted(events: list[Event]) -> Any:
        batches.append(len(events))
        return real(events)

    monkeypatch.setattr(broadcast, "_store_all", counted)
    sink = ChannelsBroadcast()
    async with deferred_events():
        for i in range(3):
            await sink.emit(_event("state", f"step {i}"))
        assert await TaskEvent.objects.acount() == 0  # queued, not waited for
    assert [e.text async for e in TaskEvent.objects.order_by("id")] == ["step 0", "step 1", "step 2"]
    assert batches == [3]


async def test_a_keyed_event_emitted_twice_in_one_batch_is_stored_once() -> None:
    sink = ChannelsBroadcast()
    async with deferred_events():
        await sink.emit(_event(RESULT, "the result", key="result:w1"))
        await sink.emit(_event(RESULT, "the result again", key="result:w1"))  # a crash's re-emission, say
        await sink.emit(_event("watch.ended", "ended"))
    assert [(e.kind, e.text) async for e in TaskEvent.objects.order_by("id")] == [
        (RESULT, "the result"),
        ("watch.ended", "ended"),
    ]


async def test_an_event_emitted_after_the_call_is_waited_for_again() -> None:
    sink = ChannelsBroadcast()
    later: list[asyncio.Task[None]] = []
    go = asyncio.Event()

    async def follower() -> None:  # a task the call started, going on after it (a watch)
        await go.wait()
        await sink.emit(_event("state", "after the call"))

    async with deferred_events():
        later.append(asyncio.create_task(follower()))
    go.set()
    await later[0]
    assert [e.text async for e in TaskEvent.objects.all()] == ["after the call"]  # stored when emit returned


async def test_concurrent_events_share_transactions(monkeypatch) -> None:
    batches: list[int] = []
    real = broadcast._store_all
    monkeypatch.setattr(broadcast, "_store_all", lambda events: batches.append(len(events)) or real(events))
    sink = ChannelsBroadcast()
    await asyncio.gather(*(sink.emit(_event("state", f"push {i}", task_id=f"t-{i}")) for i in range(20)))
    assert await TaskEvent.objects.acount() == 20
    assert sum(batches) == 20 and len(batches) < 20  # a burst is written in a few transactions, not one each


async def test_an_event_that_cannot_be_stored_leaves_the_rest_of_its_batch(caplog) -> None:
    sink = ChannelsBroadcast()
    async with deferred_events():
        await sink.emit(_event("state", "before"))
        await sink.emit(_event("state", "unstorable", data={"x": object()}))  # not JSON
        await sink.emit(_event("state", "after"))
    assert [e.text async for e in TaskEvent.objects.order_by("id")] == ["before", "after"]
    assert "storing a state event of task t-1 failed" in caplog.text


class _Writes:
    """The SQL writes of any thread, and the transactions committed (an autocommit write is one of its own)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from django.db.backends.base.base import BaseDatabaseWrapper
        from django.db.backends.utils import CursorWrapper

        self.writes: list[str] = []
        self.commits = 0
        execute, commit = CursorWrapper._execute, BaseDatabaseWrapper._commit
        me = self

        def counted_execute(cursor: Any, sql: str, *args: Any) -> Any:
            if sql.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE")):
                me.writes.append(sql.split(" (", 1)[0][:40])
                me.commits += not cursor.db.in_atomic_block
            return execute(cursor, sql, *args)

        def counted_commit(db: Any) -> Any:
            me.commits += 1
            return commit(db)

        monkeypatch.setattr(CursorWrapper, "_execute", counted_execute)
        monkeypatch.setattr(BaseDatabaseWrapper, "_commit", counted_commit)


async def test_an_api_send_commits_once(host: Host, monkeypatch) -> None:
    first = {"action": "send", "agent": "echo", "message": "first", "hops": 3}
    assert (await host.call(first))[0] == 200  # notes the token's use and the hops
    assert (await ChatTarget.objects.aget(pk=host.target.id)).inbound_hops == 3
    writes = _Writes(monkeypatch)
    status, answer = await host.call({"action": "send", "agent": "echo", "message": "counted", "hops": 3})
    assert status == 200 and answer["state"] == "completed"
    # the token checked (a read), its use noted a minute ago already, the hops the same; the events and the task's
    # row: one transaction
    assert writes.commits == 1, writes.writes
    assert len(writes.writes) == 2, writes.writes  # one INSERT of the events, one of the task's row
    kinds = [k for k, _ in await _events(answer["taskId"])]
    assert kinds.count(SENT) == 1 and kinds.count(RESULT) == 1, kinds


async def test_a_send_with_an_idempotency_key_claims_it_in_one_transaction(host: Host, monkeypatch) -> None:
    assert (await host.call({"action": "agents"}))[0] == 200  # notes the token's use
    writes = _Writes(monkeypatch)
    body = {"action": "send", "agent": "echo", "message": "keyed"}
    status, answer = await host.call(body, headers={"Idempotency-Key": "k-1"})
    assert status == 200 and answer["state"] == "completed"
    # the key claimed (old keys forgotten in the same transaction), the events, the answer kept: three commits
    assert writes.commits == 3, writes.writes
    assert (await host.call(body, headers={"Idempotency-Key": "k-1"}))[1] == answer  # and kept it is


async def test_a_send_cut_short_keeps_the_events_it_emitted(host: Host, monkeypatch, caplog) -> None:
    from a2aconsole.core.tool import tool as tool_module

    async def broken(*args: Any) -> Any:
        raise RuntimeError("the first check broke")  # after the agent took the message: `sent` was emitted

    monkeypatch.setattr(tool_module, "first_check", broken)
    status, answer = await host.call({"action": "send", "agent": "echo", "message": "cut short"})
    assert status == 200 and "failed unexpectedly (RuntimeError)" in answer["error"]
    sent = [e async for e in TaskEvent.objects.filter(kind=SENT, text="cut short")]  # stored before the answer
    assert len(sent) == 1 and sent[0].task_id
    assert (await TaskRecord.objects.aget(task_id=sent[0].task_id)).sent_text == "cut short"


async def test_an_api_call_is_handed_to_another_thread_only_for_its_database_work(host: Host, monkeypatch) -> None:
    from django.core.signals import request_finished, request_started

    sent: list[str] = []

    def started(**kw: Any) -> None:
        sent.append("started")

    def finished(**kw: Any) -> None:
        sent.append("finished")

    request_started.connect(started)
    request_finished.connect(finished)
    hops = count_thread_hops(monkeypatch)
    async with asgi_client() as client:

        async def call() -> None:
            resp = await client.post(
                f"/api/v1/targets/{host.target.id}/tool",
                json={"action": "agents"},
                headers={"Authorization": f"Bearer {host.token}"},
            )
            assert resp.status_code == 200 and resp.json()["agents"][0]["name"] == "echo"

        await call()
        # no middleware hook (each of the console's was a hand-off: some fifteen), nor Django's request_started and
        # response.close (sent in the loop): the token's lookup only (in the tests' in-memory database; else a
        # database thread)
        assert hops == ["TokenCache._read"], hops
        await call()
        assert hops == ["TokenCache._read"], hops  # the token kept: the second call hands nothing off
    request_started.disconnect(started)
    request_finished.disconnect(finished)
    assert sent == ["started", "finished"] * 2  # the signals still sent, each request, in the loop


async def test_api_answers_keep_the_security_headers_and_host_check(host: Host) -> None:
    async with asgi_client() as client:
        resp = await client.post(f"/api/v1/targets/{host.target.id}/tool", json={})
        foreign = await client.post(f"/api/v1/targets/{host.target.id}/tool", json={}, headers={"Host": "evil.example"})
        unknown = await client.get("/api/v1/nothing-here")
    assert resp.status_code == 401
    assert resp.headers["X-Content-Type-Options"] == "nosniff" and resp.headers["X-Frame-Options"] == "DENY"
    assert "default-src 'self'" in resp.headers["Content-Security-Policy"]
    assert "set-cookie" not in resp.headers and "Cookie" not in resp.headers.get("Vary", "")
    assert foreign.status_code == 400 and "error" in foreign.json()  # the host check, answered in JSON
    assert unknown.status_code == 404 and "error" in unknown.json()


def _issue_token(db: Path) -> str:
    """A token for the console's chat target, written straight into the server's database."""
    from a2aconsole.web.models import TOKEN_PREFIX, hash_token

    token = TOKEN_PREFIX + "killed-console-test-token"
    with sqlite3.connect(db) as c:
        c.execute(
            "INSERT INTO api_apitoken (target_id, name, token_hash, prefix, created_at) "
            "VALUES ('console', 'test', ?, ?, datetime('now'))",
            (hash_token(token), token[:12]),
        )
    return token


def test_a_console_killed_right_after_answering_keeps_the_calls_events(
    tmp_path: Path, make_agent: Callable[..., TestAgent]
) -> None:
    agent = make_agent()
    server = ConsoleServer(tmp_path).start(timeout=60)
    try:
        write_agents(Workspace(server.workspace.root), entry("echo", agent))
        db = tmp_path / "data" / "db.sqlite3"
        token = _issue_token(db)
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as c:
            r = c.post("/api/v1/targets/console/tool", json={"action": "send", "agent": "echo", "message": "keep me"})
            server.kill()  # SIGKILL the moment the answer is in: no shutdown code runs
        assert r.status_code == 200 and r.json()["state"] == "completed"
    finally:
        server.kill()
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT kind, text FROM web_taskevent WHERE task_id = ?", (r.json()["taskId"],)).fetchall()
    kinds = sorted(k for k, _ in rows)
    assert ("sent", "keep me") in rows and kinds.count("result") == 1 and kinds.count("sent") == 1


class _Runtime:
    """What `_flush_kept` uses of the runtime: its clock and `request_flush`."""

    def __init__(self) -> None:
        from tests.support.clock import FakeClock

        self.clock = FakeClock()
        self.flushed: list[str] = []

    def request_flush(self, target: Chat) -> None:
        self.flushed.append(target.id)


async def test_a_busy_host_asks_for_one_flush_a_second_not_one_per_call(tmp_path: Path) -> None:
    from a2aconsole.core.watches.registry import FLUSH_DELAY

    rt = _Runtime()
    bot, other = Chat("bot", Workspace(tmp_path / "bot")), Chat("other", Workspace(tmp_path / "other"))
    for _ in range(5):
        views._flush_kept(rt, bot)
    views._flush_kept(rt, other)
    assert rt.flushed == ["bot", "other"]  # the first flush reads the kept results after all five calls
    await rt.clock.advance(FLUSH_DELAY)
    views._flush_kept(rt, bot)
    assert rt.flushed == ["bot", "other", "bot"]


class _Conn:
    """What `db_threads.tidy` reads of a Django connection (a PostgreSQL one: the tests' SQLite is in memory)."""

    alias, vendor, settings_dict = "default", "postgresql", {"AUTOCOMMIT": True}

    def __init__(self, usable: bool = True) -> None:
        self.connection: object | None = object()
        self.usable, self.in_atomic_block, self.errors_occurred, self.health_check_done = usable, False, False, True

    def get_autocommit(self) -> bool:
        return True

    def is_usable(self) -> bool:
        return self.usable

    def close(self) -> None:
        self.connection = None


def test_a_database_thread_keeps_its_connection_until_it_is_old_or_broken() -> None:
    from a2aconsole.web.db_threads import KEEP_SECONDS, tidy

    seen: dict[str, tuple[int, float]] = {}
    conn = _Conn()
    assert tidy(conn, seen, 0.0) and tidy(conn, seen, KEEP_SECONDS - 1)  # kept between jobs
    assert conn.health_check_done is False  # checked again before the next job uses it
    assert not tidy(conn, seen, KEEP_SECONDS) and conn.connection is None  # renewed after KEEP_SECONDS

    failed = _Conn(usable=False)
    failed.errors_occurred = True
    assert not tidy(failed, {}, 0.0) and failed.connection is None
    survived = _Conn()
    survived.errors_occurred = True  # an error, yet the connection still works (a constraint, say): kept
    assert tidy(survived, {}, 0.0) and not survived.errors_occurred
    left_open = _Conn()
    left_open.in_atomic_block = True
    assert not tidy(left_open, {}, 0.0)
