"""Benchmark (a script, not collected by pytest): live watch tables under a burst of task changes.

    .venv/bin/python tests/bench/live.py [--watches 500] [--tabs 10] [--rate 50] [--seconds 20]
    .venv/bin/python tests/bench/live.py --watches 1000 --tabs 1 --seconds 0      # bug 7: the first frames

A server process runs plain daphne over the real `a2aconsole.asgi` (real WebSockets, daphne's 1 MiB message
limit) with `--watches` push watches in pending.json. The bench opens `--tabs` watch-table tabs as WebSocket
clients with the owner's session, then the server emits `--rate` task changes a second for `--seconds` through
the console's own event sink (`ChannelsBroadcast`: stored, then fanned out), each one a new state of a random
watch's task, and after a pause one more change (do the original tabs still hear?). Each tab follows the
state of every row from the fragments it gets. Printed: frames and bytes per tab, the largest frame, how long
after the last change every tab showed every row's final state, and the sink's p50/p99 per change (store +
fan-out: what a push costs the receiver's process besides GetTask). The server's CPU time over the burst is
printed too (target: under one core).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SERVER = r"""
import asyncio, json, os, random, resource, sys, time
import django
django.setup()
from django.core.management import call_command
call_command("migrate", interactive=False, verbosity=0)
from django.contrib.auth import get_user_model
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.auth import SESSION_KEY, BACKEND_SESSION_KEY, HASH_SESSION_KEY
user = get_user_model().objects.create_user("owner", password="bench password 1")
s = SessionStore()
s[SESSION_KEY], s[BACKEND_SESSION_KEY] = str(user.pk), "django.contrib.auth.backends.ModelBackend"
s[HASH_SESSION_KEY] = user.get_session_auth_hash()
s.create()
print("session", s.session_key, flush=True)

from daphne.server import Server
from a2aconsole.asgi import application
from a2aconsole.core.events import STATE, Event
from a2aconsole.core.pending.records import WatchRecord
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.broadcast import ChannelsBroadcast
from datetime import UTC, datetime

WATCHES, RATE = int(os.environ["BENCH_WATCHES"]), float(os.environ["BENCH_RATE"])
SECONDS = float(os.environ["BENCH_SECONDS"])
ws = Workspace(os.environ["A2ACONSOLE_WORKSPACE"])
records = [WatchRecord(f"w{i}", "console", "bot", f"task-{i:05d}", f"ctx-{i}", source="push",
                       started_at="2026-01-01T00:00:00Z", push_token="t") for i in range(WATCHES)]

async def write() -> None:
    async with pending.transaction(ws) as tx:
        tx.add(*records)

asyncio.run(write())
STATES = ["working", "input-required", "submitted", "auth-required"]

def change(r, state, text):
    return Event(STATE, str(ws.root), r.agent, r.task_id, datetime.now(UTC), target=r.target, state=state, text=text)

async def burst() -> None:
    loop = asyncio.get_running_loop()
    line = await loop.run_in_executor(None, sys.stdin.readline)
    sink, rng, final, costs = ChannelsBroadcast(), random.Random(7), {}, []
    cpu0, start = resource.getrusage(resource.RUSAGE_SELF), loop.time()
    n = int(RATE * SECONDS)
    for i in range(n):
        await asyncio.sleep(max(0.0, start + i / RATE - loop.time()))
        r = rng.choice(records)
        state = STATES[i % len(STATES)]
        t0 = time.perf_counter()
        await sink.emit(change(r, state, f"change {i}"))
        costs.append(time.perf_counter() - t0)
        final[r.watch_id] = state
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
    costs.sort()
    pick = lambda q: costs[min(len(costs) - 1, int(q * len(costs)))] * 1000 if costs else 0.0
    print("burst", json.dumps({"last": time.time(), "final": final, "p50": pick(0.5), "p99": pick(0.99),
                               "cpu": cpu, "wall": loop.time() - start, "changes": n}), flush=True)
    await loop.run_in_executor(None, sys.stdin.readline)  # the bench says: one more
    r = records[0]
    await sink.emit(change(r, "canceled", "after"))
    print("after", time.time(), flush=True)

def ready():
    print("listening on", server.listening_addresses[0][1], flush=True)
    asyncio.get_event_loop().create_task(burst())

server = Server(application=application, endpoints=["tcp:port=0:interface=127.0.0.1"], ready_callable=ready,
                verbosity=0)
server.run()
"""

ROW = re.compile(r'<tr id="watch-(w\d+)"[^>]*>.*?class="badge state-([\w-]+)"', re.S)  # old and new markup


class Tab:
    def __init__(self) -> None:
        self.frames = 0
        self.bytes = 0
        self.largest = 0
        self.first = 0
        self.states: dict[str, str] = {}
        self.changed = asyncio.Event()

    def take(self, frame: str) -> None:
        self.frames += 1
        size = len(frame.encode())
        self.bytes += size
        self.largest = max(self.largest, size)
        self.first = self.first or size
        for watch, state in ROW.findall(frame):
            self.states[watch] = state
        self.changed.set()


async def follow(url: str, cookie: str, tab: Tab, closed: list[str]) -> None:
    import websockets

    headers = {"Cookie": f"sessionid={cookie}", "Origin": url.replace("ws://", "http://").split("/ws/")[0]}
    try:
        async with websockets.connect(url, additional_headers=headers, max_size=None, open_timeout=60) as sock:
            async for frame in sock:
                tab.take(str(frame))
    except Exception as e:
        closed.append(f"{type(e).__name__}: {e} ({e.__cause__!r})")


async def until(check, deadline: float) -> bool:
    while not check():
        if time.time() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


def start_server(env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", SERVER], cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--watches", type=int, default=500)
    ap.add_argument("--tabs", type=int, default=10)
    ap.add_argument("--rate", type=float, default=50)
    ap.add_argument("--seconds", type=float, default=20)
    a = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-live-"))
    (base / "workspace").mkdir()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "a2aconsole.settings",
        "A2ACONSOLE_DATA": str(base / "data"),
        "A2ACONSOLE_WORKSPACE": str(base / "workspace"),
        "SECRET_KEY": "bench-only",
        "BENCH_WATCHES": str(a.watches),
        "BENCH_RATE": str(a.rate),
        "BENCH_SECONDS": str(a.seconds),
        "PYTHONUNBUFFERED": "1",
    }
    proc = start_server(env)
    assert proc.stdout is not None and proc.stdin is not None
    lines: asyncio.Queue[str] = asyncio.Queue()
    loop = asyncio.get_running_loop()

    def read() -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            loop.call_soon_threadsafe(lines.put_nowait, line.strip())

    loop.run_in_executor(None, read)
    try:
        cookie = port = ""
        while not port:
            line = await asyncio.wait_for(lines.get(), 60)
            if line.startswith("session "):
                cookie = line.split()[1]
            elif line.startswith("listening on "):
                port = line.split()[-1]
        url = f"ws://127.0.0.1:{port}/ws/console/watches/"
        tabs, closed = [Tab() for _ in range(a.tabs)], []
        t0 = time.time()
        runs = [asyncio.create_task(follow(url, cookie, t, closed)) for t in tabs]
        await until(lambda: all(len(t.states) == a.watches for t in tabs) or closed, time.time() + 60)
        ok = all(len(t.states) == a.watches for t in tabs)
        print(f"{a.watches} watches, {a.tabs} tabs: every tab had every row after {time.time() - t0:.2f} s: {ok}")
        first = tabs[0]
        print(
            f"first render: {first.frames} frames, {first.bytes / 1024:.0f} KiB, first frame {first.first / 1024:.1f}"
            f" KiB, largest {first.largest / 1024:.1f} KiB (daphne's limit: 1024 KiB); sockets closed: {closed}"
        )
        if a.seconds <= 0:
            return
        before = [(t.frames, t.bytes) for t in tabs]
        proc.stdin.write("go\n")
        proc.stdin.flush()
        while not (line := await asyncio.wait_for(lines.get(), a.seconds + 120)).startswith("burst "):
            pass
        burst = json.loads(line[len("burst ") :])
        final = burst["final"]
        current = await until(
            lambda: all(all(t.states.get(w) == s for w, s in final.items()) for t in tabs), burst["last"] + 30
        )
        lag = time.time() - burst["last"]
        frames = [t.frames - f for t, (f, _) in zip(tabs, before, strict=True)]
        sent = sum(t.bytes - b for t, (_, b) in zip(tabs, before, strict=True))
        print(
            f"burst: {burst['changes']} changes in {burst['wall']:.1f} s on {len(final)} watches; every tab current "
            f"{lag:.2f} s after the last change: {current}"
        )
        print(f"frames per tab: min {min(frames)}, max {max(frames)}; {sent / 1e6:.1f} MB sent to {a.tabs} tabs")
        print(f"sink per change (store + fan-out): p50 {burst['p50']:.1f} ms, p99 {burst['p99']:.1f} ms")
        print(
            f"server CPU over the burst: {burst['cpu']:.1f} s in {burst['wall']:.1f} s "
            f"({100 * burst['cpu'] / burst['wall']:.0f}% of one core)"
        )
        for t in tabs:
            t.changed.clear()
        proc.stdin.write("more\n")
        proc.stdin.flush()
        heard = await until(lambda: all(t.states.get("w0") == "canceled" for t in tabs), time.time() + 15)
        print(f"one more change afterwards reached every original tab: {heard}; sockets closed: {closed}")
        for r in runs:
            r.cancel()
    finally:
        proc.terminate()
        proc.wait(timeout=20)


if __name__ == "__main__":
    asyncio.run(main())
