"""Progress, live (issue 12, bug 9): an agent's status messages pushed while its task works reach the open tabs of
the real server (`manage.py serve`: daphne, the worker, SQLite), and a reload shows the latest one (stored).

Before, a push only woke the watch, and an event was emitted only when the state changed: 200 status-only pushes
made 0 frames. Now each push's own status message is shown (issue 27), without a GetTask; a forged one shows nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import websockets

from a2aconsole.core import pending
from a2aconsole.core.clock import SystemClock
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.remote.http import new_http_client
from tests.support.console_server import OWNER, PASSWORD, ConsoleServer
from tests.support.daphne_process import closed_port
from tests.support.js_agents import SdkAgent
from tests.support.watching import add_record, eventually, start_task

STEPS = 200
LAST = f"working {STEPS}/{STEPS}"


@pytest.fixture
def console(tmp_path: Path) -> Iterator[ConsoleServer]:
    port = closed_port()  # the console's own address is its push URL, known before it starts
    server = ConsoleServer(tmp_path, port=port, A2AClient__PushBaseUrl=f"http://127.0.0.1:{port}")
    yield server
    server.stop()


def log_in(url: str) -> str:
    """The owner's session cookie, through the login form."""
    with httpx.Client(base_url=url, timeout=20) as c:
        c.get("/login/")
        form = {"username": OWNER, "password": PASSWORD, "csrfmiddlewaretoken": c.cookies["csrftoken"]}
        c.post("/login/", data=form, headers={"Referer": f"{url}/login/"})
        return c.cookies["sessionid"]


class Tab:
    """One open tab's WebSocket: every frame it got, read in the background."""

    def __init__(self, console: ConsoleServer, cookie: str, path: str) -> None:
        self.url, self.path = console.ws_url, path
        self.headers = {"Cookie": f"sessionid={cookie}", "Origin": console.url}
        self.frames: list[str] = []
        self._reader: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Tab:
        self.sock = await websockets.connect(self.url + self.path, additional_headers=self.headers, max_size=None)
        self.frames.append(str(await asyncio.wait_for(self.sock.recv(), 20)))  # the connect frame
        self._reader = asyncio.ensure_future(self._read())
        return self

    async def _read(self) -> None:
        async for frame in self.sock:
            self.frames.append(str(frame))

    async def __aexit__(self, *exc: object) -> None:
        await self.sock.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(BaseException):
                await self._reader

    def said(self) -> list[str]:
        """The status messages its frames carried, in order."""
        return [m for f in self.frames for m in re.findall(r"working \d+/\d+", f)]


async def test_status_only_pushes_reach_the_open_tabs(console: ConsoleServer, sdk_agent: SdkAgent) -> None:
    ws = console.workspace
    ws.root.mkdir(parents=True, exist_ok=True)
    ws.save_agents([{"name": "bot", "url": sdk_agent.url}], None)
    http = new_http_client()
    try:
        task = await start_task(Remote(http, call_timeout=10.0, card_timeout=5.0), ws, "bot", f"steps {STEPS} go end")
        record = await add_record(ws, task, "bot", SystemClock(), target="console", source="push")
        await asyncio.to_thread(console.start)
        await eventually(
            lambda: "CreateTaskPushNotificationConfig" in sdk_agent.methods, timeout=30, what="the push config"
        )
        cookie = await asyncio.to_thread(log_in, console.url)
        pages = ("/ws/console/watches/", f"/ws/console/task/?agent=bot&task={task.id}&target=console")
        async with (
            Tab(console, cookie, pages[0]) as watches,
            Tab(console, cookie, pages[1]) as timeline,
            Tab(console, cookie, "/ws/console/chat/?target=console") as chat,
        ):
            # a forged push (its watch's id, not its token) is refused and shows nothing
            forged = {
                "statusUpdate": {
                    "taskId": task.id,
                    "contextId": task.context_id,
                    "status": {
                        "state": "TASK_STATE_WORKING",
                        "message": {"messageId": "f1", "role": "ROLE_AGENT", "parts": [{"text": "forged 1/1"}]},
                    },
                }
            }
            async with httpx.AsyncClient(base_url=console.url, timeout=20) as c:
                await eventually(lambda: pending.read(ws).records[0].push_token, what="the watch's token in the file")
                real = str(pending.read(ws).records[0].push_token)
                for token in ("not-the-token", real[:-1]):
                    headers = {"X-A2A-Notification-Token": token}
                    answer = await c.post(f"/a2a/push/{record.watch_id}", json=forged, headers=headers)
                    assert answer.status_code == 404
            checks = sdk_agent.methods.count("GetTask")
            sdk_agent.release("go")  # 200 status updates, each pushed, none changing the state
            await eventually(lambda: LAST in "".join(watches.frames), timeout=60, what="the last status on the watches")
            # each push's own status message was shown: no GetTask for any of them
            assert sdk_agent.methods.count("GetTask") == checks
            await eventually(lambda: LAST in "".join(timeline.frames), timeout=30, what="the last status on the task")
            await eventually(lambda: LAST in "".join(chat.frames), timeout=30, what="the last status in the chat")
            for tab in (watches, timeline, chat):
                said = tab.said()
                assert said and said[-1] == LAST
                assert said == sorted(said, key=lambda s: int(s.split()[1].split("/")[0]))  # never backwards
            row = next(f for f in reversed(watches.frames) if LAST in f)
            assert f'<tr id="watch-{record.watch_id}" hx-swap-oob="true"' in row and "data-task-state" in row
            # one line updated in place, never the timeline or the chat again per message (at most one resync)
            assert sum('id="timeline-log"' in f for f in timeline.frames[1:]) <= 1
            assert sum('id="chat-log"' in f for f in chat.frames[1:]) <= 1
            line = next(f for f in reversed(chat.frames) if LAST in f)
            assert 'id="progress-' in line  # the task's line in the conversation
            assert not any("forged" in f for tab in (watches, timeline, chat) for f in tab.frames)
        # stored: a reload shows the latest (the task page's timeline line, the watch row, the Tasks page row)
        async with httpx.AsyncClient(base_url=console.url, cookies={"sessionid": cookie}, timeout=20) as c:
            for path in (f"/tasks/bot/{task.id}/?target=console", "/watches/", "/tasks/", "/chat/console/"):
                page = (await c.get(path)).text
                assert LAST in page, path
                assert "working 199/200" not in page, path
    finally:
        sdk_agent.release("go")
        sdk_agent.release("end")
        await http.aclose()
