"""Scale-out over Redis stays up when idle: a worker and an open page outlive redis-py's default read timeout.

channels_redis blocks 5 s reading a channel and redis-py 8 gives up on any read after 5 s by default, so an idle
`runworker` died with TimeoutError and open pages closed with 1011 after 5 s. This waits 30 s of real time on
purpose (a socket timeout cannot be faked), then proves both still work by carrying a watch's result from the
worker to the open page.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import subprocess
from pathlib import Path

import httpx
import pytest
import websockets
from channels_redis.core import RedisChannelLayer

from tests.support.console_server import OWNER, PASSWORD, ConsoleServer
from tests.support.watching import eventually
from tests.support.worker_env import console_watch, start_worker, worker_env

REDIS_URL = "redis://127.0.0.1:6379/8"  # its own database: no other test's channel sees these messages
IDLE_SECONDS = 30

pytestmark = [pytest.mark.timeout(150)]


def _login(url: str) -> str:
    """The session cookie of the owner, logged in through the real login form."""
    with httpx.Client(base_url=url) as c:
        page = c.get("/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert token, "the login page has a CSRF token"
        r = c.post(
            "/login/",
            data={"username": OWNER, "password": PASSWORD, "csrfmiddlewaretoken": token.group(1)},
            headers={"Referer": url + "/login/", "Origin": url},
        )
        assert r.status_code == 302, r.text[:300]
        return "; ".join(f"{k}={v}" for k, v in c.cookies.items())


async def test_idle_worker_and_open_page_survive_30s_over_redis(make_agent, remote, tmp_path: Path) -> None:
    layer = RedisChannelLayer(hosts=[REDIS_URL])
    await layer.flush()
    web = ConsoleServer(tmp_path / "web", REDIS_URL=REDIS_URL, A2ACONSOLE_WATCH_WORKER="external").start()
    worker: subprocess.Popen[bytes] | None = None
    worker_log = (tmp_path / "worker.log").open("w+")
    try:
        env = {**worker_env(tmp_path / "web" / "data", web.workspace), "REDIS_URL": REDIS_URL}
        worker = start_worker(env, stderr=worker_log)
        cookie = await asyncio.to_thread(_login, web.url)
        headers = {"Cookie": cookie, "Origin": web.url}
        chat = web.ws_url + "/ws/console/chat/?target=console"
        async with websockets.connect(chat, additional_headers=headers) as ws:
            first = await asyncio.wait_for(ws.recv(), 30)  # a tab gets the current state at once
            assert "hx-swap-oob" in str(first)

            # Idle: nothing to read for 30 s, and the socket is still open at the end of it.
            with contextlib.suppress(TimeoutError):
                extra = await asyncio.wait_for(ws.recv(), IDLE_SECONDS)
                worker_log.seek(0)
                pytest.fail(
                    f"an idle page got a frame: {str(extra)[:200]}\n--- web:\n"
                    + "\n".join(web.lines[-40:])
                    + f"\n--- worker:\n{worker_log.read()[-4000:]}"
                )
            assert worker.poll() is None, "the idle worker died"

            # Both still work: the worker is woken, follows a task, and its result reaches the open page.
            agent = make_agent(push=False)
            task, _ = await console_watch(remote, web.workspace, agent, "hold idle")
            await layer.send("a2a-watches", {"type": "watch.arm", "workspace": str(web.workspace.root)})
            await eventually(lambda: "SubscribeToTask" in agent.methods, timeout=30, what="the worker to subscribe")
            agent.release("idle")
            frames: list[str] = []

            async def result_shown() -> bool:
                frames.append(str(await asyncio.wait_for(ws.recv(), 30)))
                return any("released idle" in f for f in frames)

            for _ in range(50):
                if await result_shown():
                    break
            else:
                pytest.fail(f"the page never showed the result: {json.dumps(frames)[:500]}")
        worker_log.seek(0)
        for text in (worker_log.read(), "\n".join(web.lines)):
            assert "TimeoutError" not in text
            assert "receiving failed" not in text
    finally:
        if worker is not None:
            worker.kill()
            worker.wait(timeout=10)
        worker_log.close()
        web.stop()
        await layer.flush()
        await layer.close_pools()
