"""The real console (`manage.py serve`) killed at each instant of finishing a watch: between the claim and the
result event, between the result and `watch.ended`, before the delivery, after it. Restarted, it ends with
exactly one result and one `watch.ended` in the task's history, and exactly one delivery in the chat."""

from __future__ import annotations

import signal
import sqlite3
from pathlib import Path

import pytest

from a2aconsole.core import pending
from a2aconsole.core.clock import SystemClock
from tests.support.console_server import ConsoleServer
from tests.support.crashing_console import CRASH_ENV, PHASES
from tests.support.watching import add_record, eventually, start_task

RESTART_SECONDS = 60


class History:
    """The console's own database, read as it is on disk (the server process writes it)."""

    def __init__(self, data: Path) -> None:
        self.path = data / "db.sqlite3"

    def _rows(self, sql: str, *args: str) -> list[tuple]:
        if not self.path.exists():
            return []
        db = sqlite3.connect(self.path, timeout=20)
        try:
            return db.execute(sql, args).fetchall()
        except sqlite3.OperationalError:  # the server has not made its tables yet
            return []
        finally:
            db.close()

    def kinds(self, task_id: str) -> list[str]:
        return [k for (k,) in self._rows("SELECT kind FROM web_taskevent WHERE task_id = ? ORDER BY id", task_id)]

    def inbox(self, watch_id: str) -> list[str]:
        return [t for (t,) in self._rows("SELECT text FROM web_inboxitem WHERE watch_id = ?", watch_id)]


@pytest.mark.parametrize("phase", PHASES)
async def test_a_console_killed_while_finishing_a_watch_agrees_after_restart(
    make_agent, remote, tmp_path: Path, phase: str
) -> None:
    agent = make_agent(streaming=False, push=False)  # polled: a restored poll watch checks its task at once
    crashing = ConsoleServer(tmp_path, launcher=["-m", "tests.support.crashing_console"], **{CRASH_ENV: phase})
    ws = crashing.workspace
    ws.root.mkdir(parents=True)
    ws.save_agents([{"name": "bot", "url": agent.url}], None)
    task = await start_task(remote, ws, "bot", "hello crash")  # done already: the watch finishes at restore
    rec = await add_record(ws, task, "bot", SystemClock(), target="console")
    history = History(tmp_path / "data")

    crashing.start()
    try:
        assert crashing.proc is not None
        assert crashing.proc.wait(timeout=RESTART_SECONDS) == -signal.SIGKILL
    finally:
        crashing.stop()
    [kept] = pending.read(ws).records  # claimed: the text and its events are kept
    assert kept.undelivered and "echo: hello crash" in kept.undelivered
    seen = history.kinds(task.id)
    assert seen.count("result") == (0 if phase == "before-result" else 1)
    assert seen.count("watch.ended") == (1 if phase in ("before-delivery", "after-delivery") else 0)
    assert len(history.inbox(rec.watch_id)) == (1 if phase == "after-delivery" else 0)
    assert "delivered" not in seen

    console = ConsoleServer(tmp_path).start()
    try:
        await eventually(
            lambda: pending.read(ws).records == [] and "delivered" in history.kinds(task.id),
            timeout=RESTART_SECONDS,
            what="the kept result to be delivered after the restart",
        )
    finally:
        console.stop()
    kinds = history.kinds(task.id)
    assert (kinds.count("result"), kinds.count("watch.ended"), kinds.count("delivered")) == (1, 1, 1)
    assert kinds.index("result") < kinds.index("watch.ended") < kinds.index("delivered")
    [text] = history.inbox(rec.watch_id)
    assert "echo: hello crash" in text
