"""The workspace file watch on its own: real folders, real writes, inotify; waits are bounded, never sleeps."""

from __future__ import annotations

import asyncio
import json

from a2aconsole.core import pending
from a2aconsole.core.files.atomic import mark_seen, written_here
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.records import WatchRecord, dump_pending
from a2aconsole.core.watches.file_watch import WorkspaceFileWatch
from tests.support.watching import Signal, eventually

BOUND = 5.0


class Calls:
    """What the watch reported, awaitable."""

    def __init__(self) -> None:
        self.seen: list[tuple[Workspace, frozenset[str]]] = []
        self.signal = Signal()

    async def __call__(self, ws: Workspace, names: frozenset[str]) -> None:
        self.seen.append((ws, names))
        self.signal.poke()

    async def until(self, ws: Workspace, name: str) -> None:
        await eventually(
            lambda: any(w == ws and name in n for w, n in self.seen),
            what=f"{name} reported in {ws.root}",
            timeout=BOUND,
            seen=lambda: self.seen,
            signal=self.signal,
        )


async def test_other_writers_are_reported_and_this_process_own_pending_writes_are_not(tmp_path) -> None:
    one, two = Workspace(tmp_path / "one"), Workspace(tmp_path / "two")
    one.root.mkdir()
    two.root.mkdir()
    calls = Calls()
    watch = WorkspaceFileWatch(calls)
    await watch.watch([one, Workspace(tmp_path / "missing")])  # a folder that is not there is skipped
    assert watch.folders == [one.a2a_dir] and one.a2a_dir.is_dir()
    await asyncio.wait_for(watch.ready.wait(), BOUND)

    async with pending.transaction(one) as tx:  # this process's own write (the registry's, the tool's): not reported
        tx.add(WatchRecord("w1", "console", "bot", "t1"))
    one.agents_path.write_text(json.dumps([{"name": "bot", "url": "http://127.0.0.1:9/"}]), encoding="utf-8")
    await calls.until(one, "agents.json")
    assert all("pending.json" not in names for _, names in calls.seen)
    (one.a2a_dir / "notes.txt").write_text("not ours")  # other files in the folder are not reported
    pending.file_path(one).write_text("[]", encoding="utf-8")  # by hand
    await calls.until(one, "pending.json")
    assert all(names <= {"agents.json", "pending.json"} for _, names in calls.seen)

    await watch.watch([one, two])  # a new chat target's workspace: watched from now on
    await asyncio.wait_for(watch.ready.wait(), BOUND)
    assert set(watch.folders) == {one.a2a_dir, two.a2a_dir}
    pending.file_path(two).write_text("[]", encoding="utf-8")
    await calls.until(two, "pending.json")

    await watch.stop()
    await watch.stop()  # idempotent
    seen = len(calls.seen)
    pending.file_path(one).write_text("[ ]", encoding="utf-8")
    await watch.watch([])  # nothing to watch: nothing runs
    assert watch.folders == [] and len(calls.seen) == seen


async def test_an_own_write_carrying_another_writers_change_is_not_skipped(tmp_path) -> None:
    """Another process adds a watch; this process rewrites the file (read, change, write under the lock) before
    the watcher looked: the file is this process's write, yet holds a change the worker has not followed."""
    ws = Workspace(tmp_path)
    async with pending.transaction(ws) as tx:
        tx.add(WatchRecord("mine", "console", "bot", "t1"))
    assert written_here(pending.file_path(ws))
    pending.file_path(ws).write_bytes(
        dump_pending([*pending.read(ws).records, WatchRecord("cli", "console", "bot", "t2")])
    )
    assert not written_here(pending.file_path(ws))
    async with pending.transaction(ws) as tx:
        tx.add(WatchRecord("mine-2", "console", "bot", "t3"))
    assert not written_here(pending.file_path(ws))  # it carries "cli": reported until the watcher has seen it
    mark_seen(pending.file_path(ws))
    assert written_here(pending.file_path(ws))
    async with pending.transaction(ws) as tx:
        tx.add(WatchRecord("mine-3", "console", "bot", "t4"))
    assert written_here(pending.file_path(ws))


async def test_stop_ends_the_watch_while_a_change_is_being_followed(tmp_path) -> None:
    """A change whose following never ends (a rescan waiting on a fake clock, a stuck call) does not hold up the
    stop: the runtime's close, and with it a test's teardown, hung on it."""
    ws = Workspace(tmp_path / "ws")
    ws.root.mkdir()
    entered, never = asyncio.Event(), asyncio.Event()

    async def stuck(_ws: Workspace, _names: frozenset[str]) -> None:
        entered.set()
        await never.wait()

    watch = WorkspaceFileWatch(stuck)
    await watch.watch([ws])
    await asyncio.wait_for(watch.ready.wait(), BOUND)
    pending.file_path(ws).write_text("[]", encoding="utf-8")  # by hand
    await asyncio.wait_for(entered.wait(), BOUND)
    stopping = asyncio.ensure_future(watch.stop())
    done, _ = await asyncio.wait({stopping}, timeout=BOUND)  # not wait_for: it would cancel the stop, and pass
    never.set()
    assert stopping in done, "stop() waited for the change being followed"
    await stopping
    await watch.stop()  # idempotent
