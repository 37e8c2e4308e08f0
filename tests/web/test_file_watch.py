"""The worker follows files other processes change within a moment (inotify via watchfiles), not at the minute's
rescan: a watch `manage.py a2a send` leaves in `pending.json`, a hand edit of `pending.json` or `agents.json`.
The clock is fake and never advanced: the rescan every 60 s never runs in these tests."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator

from a2aconsole.core import pending
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.events import WATCH_ARMED, Event
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.records import WatchRecord, dump_pending
from a2aconsole.web.process.runtime import RESCAN_SECONDS, Runtime
from tests.support.agents import TestAgent
from tests.support.console import add_agent, connect_socket
from tests.support.runtime import fresh_runtime
from tests.support.watching import SignalClock, WaitableSink, eventually, start_task

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
NOTICED = 5.0  # seconds: the bound a change must be followed within (it takes a fraction of one)


@pytest.fixture
def clock() -> SignalClock:
    return SignalClock()


class TimedSink(WaitableSink):
    """Events with the wall-clock time each arrived (the runtime's clock is fake)."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived: list[float] = []

    async def emit(self, event: Event) -> None:
        self.arrived.append(time.time())
        await super().emit(event)


@pytest.fixture
async def worker(ws: Workspace, clock: SignalClock) -> AsyncIterator[Runtime]:
    """The worker in this loop, running `ws` (the console's workspace), its file watch set up."""
    async with fresh_runtime(client_settings=ClientSettings(), clock=clock, events=TimedSink()) as rt:
        await rt.start_registry([ws])
        assert rt.files is not None and rt.files.folders == [ws.a2a_dir]
        await asyncio.wait_for(rt.files.ready.wait(), NOTICED)
        yield rt
        assert clock.monotonic() == 0.0 and RESCAN_SECONDS in clock.sleeps  # the minute's rescan never ran


async def receive_until(comm: WebsocketCommunicator, text: str, absent: str = "") -> str:
    """The first fragment a tab gets that shows `text` (and not `absent`); earlier ones may show older states."""
    frames: list[str] = []

    async def shown() -> str:
        while True:  # bounded by the wait below
            html = await comm.receive_from(timeout=NOTICED)
            frames.append(html)
            if text in html and not (absent and absent in html):
                return html

    what = f"a fragment showing {text!r}" + (f" without {absent!r}" if absent else "")
    return await eventually(shown, what=what, timeout=NOTICED, seen=lambda: frames[-1:])


async def armed(rt: Runtime, watch_id: str) -> None:
    sink = rt.events
    assert isinstance(sink, WaitableSink) and rt.registry is not None
    registry = rt.registry
    await sink.until(
        lambda: watch_id in registry and any(e.kind == WATCH_ARMED for e in sink.events),
        NOTICED,
        f"watch {watch_id} to be armed",
    )


async def test_a_hand_edit_of_pending_json_is_followed_at_once(
    worker: Runtime, ws: Workspace, agent: TestAgent
) -> None:
    add_agent(ws, agent)
    task = await start_task(worker.remote, ws, "bot", "hold by-hand")
    rec = WatchRecord("w-hand", "console", "bot", task.id, task.context_id, started_at="2026-01-01T00:00:00Z")
    pending.file_path(ws).write_bytes(dump_pending([rec]))  # by hand: not through this process's writer
    await armed(worker, "w-hand")
    # and a record removed by hand leaves the registry just as fast
    pending.file_path(ws).write_bytes(dump_pending([]))
    registry = worker.registry
    assert registry is not None
    await eventually(lambda: "w-hand" not in registry, what="the watch to be dropped", timeout=NOTICED)


def run_cli(ws: Workspace, *args: str) -> dict:
    """`manage.py a2a ...` in a process of its own, with the console's workspace and a data folder of its own."""
    env = {
        **os.environ,
        "A2ACONSOLE_WORKSPACE": str(ws.root),
        "A2ACONSOLE_DATA": str(ws.root.parent / "cli-data"),
        "A2AClient__WaitSeconds": "0.2",
        "DJANGO_SETTINGS_MODULE": "a2aconsole.settings",
    }
    out = subprocess.run(
        [sys.executable, "manage.py", "a2a", *args], cwd=ROOT, env=env, capture_output=True, timeout=60, check=True
    )
    return json.loads(out.stdout)


async def test_a_watch_written_by_the_cli_is_followed_within_a_second(
    worker: Runtime, ws: Workspace, agent: TestAgent
) -> None:
    add_agent(ws, agent)
    result = await asyncio.to_thread(run_cli, ws, "send", "--agent", "bot", "-m", "hold cli")
    assert result["state"] == "working" and "note" in result, result
    written = pending.file_path(ws).stat().st_mtime  # when the CLI wrote the watch (it arms nothing itself)
    [rec] = pending.read(ws).records
    assert rec.task_id == result["taskId"]
    await armed(worker, rec.watch_id)
    sink = worker.events
    assert isinstance(sink, TimedSink)
    [when] = [at for at, e in zip(sink.arrived, sink.events, strict=True) if e.kind == WATCH_ARMED]
    took = when - written
    print(f"followed {took * 1000:.0f} ms after the CLI wrote it")
    assert took < 2.0, f"the worker followed the CLI's watch {took:.2f} s after it was written"
    assert worker.registry is not None and worker.registry.snapshot()[0]["taskId"] == result["taskId"]


async def test_a_hand_edit_of_agents_json_refreshes_open_pages(
    worker: Runtime, ws: Workspace, agent: TestAgent, owner_cookie: str
) -> None:
    add_agent(ws, agent, name="before")
    agents_page, ok = await connect_socket("/ws/console/agents/", owner_cookie)
    dashboard, ok2 = await connect_socket("/ws/console/dashboard/", owner_cookie)
    assert ok and ok2
    assert "before" in await agents_page.receive_from(timeout=NOTICED)
    assert "Nothing needs you" in await dashboard.receive_from(timeout=NOTICED)

    ws.agents_path.write_text(json.dumps([{"name": "edited-by-hand", "url": agent.url}]), encoding="utf-8")
    html = await receive_until(agents_page, "edited-by-hand", absent="before")
    assert 'id="agent-list"' in html

    ws.agents_path.write_text("[{not json", encoding="utf-8")  # a broken hand edit shows on the dashboard too
    await receive_until(agents_page, "agents.json cannot be read")
    await receive_until(dashboard, "A file needs fixing")
    await agents_page.disconnect()
    await dashboard.disconnect()
    await get_channel_layer().flush()
