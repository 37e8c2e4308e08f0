"""Benchmark (a script, not collected by pytest): how many pushes a second one console process takes.

    .venv/bin/python -m tests.bench.push_rate [--sdk python|js|both] [--watches 1000] [--rates 100,200,...]
        [--seconds 10]

The real console (`manage.py serve`: daphne, the embedded worker, SQLite) runs with `--watches` push watches on
tasks of a real agent, each of which registered its push config with the agent at start: an a2a-sdk agent in its
own process (`push_to_row`'s, every task `working`), or an @a2a-js/sdk agent in the node host of the tests (its
`hold` tasks). One tab (a WebSocket on the watches page) is open. Then, for each rate in turn, pushes for
`--seconds` to random watches, as the agent's SDK sends them: a status update, the state still `working`, a new
status message each. Each step prints the rate reached, the push answers' p50/p99, pushes not answered 200
(lost), the console process's CPU per push (/proc/<pid>/stat, all its threads), GetTasks per push (counted by
the agent), and whether every pushed watch's row on the Tasks index shows its last pushed message (read from the
console's SQLite after the step: stored, not only answered). It stops at the first rate whose p99 passes 50 ms or
that loses a push (`--keep-going`: runs every rate), and prints the highest rate that passed. Target: 500
pushes/s, CPU per push under 2 ms. The Python agent's every GetTask finds a new status message on its task (as a
real agent's would after it pushed one), so a console that checks after each push has news to store too.

The load generator runs in this process (SENDERS senders, each an httpx client with one kept connection, open
loop: a push's answer time counts from when it was due): its own CPU is printed beside the console's, as the
machine's 2 cores are shared between them.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from a2aconsole.core import pending  # noqa: E402
from a2aconsole.core.pending.records import WatchRecord  # noqa: E402
from tests.bench.push_to_row import cpu_seconds, free_port, percentiles  # noqa: E402

P99_TARGET_MS = 50.0
IDLE_SECONDS = 5.0  # the console's own CPU with no pushes, measured first: CPU per push is net of it
SENDERS = 64  # pushes in flight at most: at 500/s, room for answers of up to 128 ms


@dataclass
class Agent:
    """The agent under the watches: its URL, its tasks (id, context), and how many GetTasks it has answered."""

    sdk: str
    url: str
    tasks: list[tuple[str, str]]
    gets: object  # () -> int
    stop: object  # () -> None


def python_agent(base: Path, count: int) -> Agent:
    import httpx

    port_file = base / "agent-url"
    proc = subprocess.Popen(  # every GetTask finds a new status message: a check after a push has news to store
        [sys.executable, "-m", "tests.bench.push_to_row", "--agent", str(port_file), str(count)],
        cwd=ROOT,
        env={**os.environ, "A2A_BENCH_SAYING": "1"},
    )
    atexit.register(proc.kill)
    while not port_file.exists() or not port_file.read_text():
        time.sleep(0.05)
    url = port_file.read_text()
    tasks = [(f"task-{i:06d}", f"ctx-{i:06d}") for i in range(count)]

    def gets() -> int:
        return int(httpx.get(url + "bench/gets", timeout=10).json()["gets"])

    def stop() -> None:
        proc.kill()
        proc.wait()

    return Agent("python (a2a-sdk)", url, tasks, gets, stop)


def js_agent(base: Path, count: int) -> Agent:
    from a2aconsole.core.files.agents import AgentEntry
    from a2aconsole.core.remote import Remote, TaskSnapshot, outgoing_message
    from a2aconsole.core.remote.http import new_http_client
    from tests.support.js_agents import JsAgentHost

    host = JsAgentHost(base / "js-agent.log")
    atexit.register(host.stop)
    agent = host.make(streaming=False, push=True)

    async def start_all() -> list[tuple[str, str]]:
        http = new_http_client()
        try:
            remote = Remote(http, call_timeout=30.0, card_timeout=10.0)
            conn = await remote.connect(AgentEntry("bench", agent.url))
            sem = asyncio.Semaphore(20)

            async def one(i: int) -> tuple[str, str]:
                async with sem:
                    task = await conn.send(outgoing_message(f"hold never-{i}", [], "", "", {}))
                assert isinstance(task, TaskSnapshot)
                return task.id, task.context_id

            return list(await asyncio.gather(*(one(i) for i in range(count))))
        finally:
            await http.aclose()

    tasks = asyncio.run(start_all())

    def gets() -> int:
        return agent.methods.count("GetTask")

    def stop() -> None:
        agent.stop()
        host.stop()

    return Agent("js (@a2a-js/sdk)", agent.url, tasks, gets, stop)


@dataclass
class Step:
    rate: float
    pushes: int = 0
    wall: float = 0.0
    answers: list[float] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    cpu: float = 0.0
    client_cpu: float = 0.0
    gets: int = 0
    stale_rows: int = 0

    def net_cpu(self, idle: float) -> float:
        return max(0.0, self.cpu - idle * self.wall)

    def p99(self) -> float:
        v = sorted(self.answers)
        return v[min(len(v) - 1, int(0.99 * len(v)))] if v else float("inf")

    def passed(self) -> bool:
        return not self.lost and self.p99() <= P99_TARGET_MS and self.stale_rows == 0


class Bench:
    def __init__(self, agent: Agent, base: Path) -> None:
        from tests.support.console_server import ConsoleServer

        self.agent = agent
        port = free_port()
        self.console = ConsoleServer(base, port=port, A2AClient__PushBaseUrl=f"http://127.0.0.1:{port}")
        ws = self.console.workspace
        ws.root.mkdir(parents=True, exist_ok=True)
        ws.save_agents([{"name": "bench", "url": agent.url}], None)
        at = datetime.now(UTC).isoformat()  # started now: a watch older than its timeout is dropped at start
        records = [
            WatchRecord(f"w{i}", "console", "bench", tid, ctx, None, at) for i, (tid, ctx) in enumerate(agent.tasks)
        ]

        async def write() -> None:
            async with pending.transaction(ws) as tx:
                tx.add(*records)

        asyncio.run(write())
        self.console.start(timeout=180)
        deadline = time.monotonic() + 300
        while True:
            recs = pending.read(ws).records
            if len(recs) == len(records) and all(r.source == "push" and r.push_token for r in recs):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"watches not on push: {[(r.watch_id, r.source) for r in recs][:5]}")
            time.sleep(0.5)
        self.pid = self.console.proc.pid  # type: ignore[union-attr]
        print(f"  console pid {self.pid} ({len(recs)} watches on push)", flush=True)
        while time.monotonic() < deadline:  # the start's work done (the first checks, their events)
            cpu = cpu_seconds(self.pid)
            time.sleep(1.0)
            if cpu_seconds(self.pid) - cpu < 0.05:
                break
        self.watches = {r.watch_id: (str(r.push_token), r.task_id, r.context_id) for r in recs}
        self.db = base / "data" / "db.sqlite3"
        self.counter = 0
        self.idle = 0.0  # the console's CPU seconds a second with no pushes

    def body(self, watch: str) -> tuple[bytes, str]:
        """A status update as the agent's SDK POSTs it: still working, a new status message."""
        _, task_id, context_id = self.watches[watch]
        self.counter += 1
        text = f"step {self.counter}."  # the dot: "step 5." is not found in "step 51."
        status = {
            "state": "TASK_STATE_WORKING",
            "message": {"messageId": f"m{self.counter}", "role": "ROLE_AGENT", "parts": [{"text": text}]},
        }
        update = {"statusUpdate": {"taskId": task_id, "contextId": context_id, "status": status}}
        return json.dumps(update).encode(), text

    def stale(self, last: dict[str, str]) -> int:
        """Pushed watches whose task row does not show the last message pushed to it (read from the database)."""
        by_task = {self.watches[w][1]: text for w, text in last.items()}
        con = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=30)
        try:
            rows = dict(con.execute("SELECT task_id, progress FROM web_taskrecord WHERE agent = 'bench'").fetchall())
        finally:
            con.close()
        return sum(1 for tid, text in by_task.items() if text not in (rows.get(tid) or ""))

    async def step(self, clients: list[object], rate: float, seconds: float) -> Step:
        """Pushes at `rate` for `seconds`, open loop: each is due at its moment, and its answer time counts from
        then (a push waiting for a free connection waits on the console's slowness, not hidden by it). Each of the
        senders has a client of its own with one connection: one client with hundreds of queued requests spends
        more CPU in its connection pool than the console spends on a push."""
        import httpx

        out = Step(rate)
        rng = random.Random(int(rate))
        order = list(self.watches)
        last: dict[str, str] = {}
        url = self.console.url
        busy: set[str] = set()  # watches with a push in flight: an agent pushes a task's events one after another
        room = asyncio.Event()  # set when a push in flight is answered
        due: asyncio.Queue[tuple[float, str, bytes] | None] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        async def sender(http: object) -> None:
            assert isinstance(http, httpx.AsyncClient)
            while (item := await due.get()) is not None:
                at, watch, body = item
                headers = {"X-A2A-Notification-Token": self.watches[watch][0], "Content-Type": "application/json"}
                try:
                    r = await http.post(f"{url}/a2a/push/{watch}", content=body, headers=headers)
                except httpx.HTTPError as e:
                    out.lost.append(type(e).__name__)
                    continue
                finally:
                    busy.discard(watch)
                    room.set()
                out.answers.append((loop.time() - at) * 1000)
                if r.status_code != 200:
                    out.lost.append(str(r.status_code))

        n = int(rate * seconds)
        gets0 = await asyncio.to_thread(self.agent.gets)  # type: ignore[arg-type]
        senders = [asyncio.create_task(sender(c)) for c in clients]
        cpu0, client0, start = cpu_seconds(self.pid), time.process_time(), loop.time()
        for i in range(n):
            at = start + i / rate
            if at > loop.time():
                await asyncio.sleep(at - loop.time())
            while len(busy) > len(order) // 2:  # a backlog of half the watches: the console is far behind anyway
                room.clear()
                await room.wait()
            watch = rng.choice(order)
            while watch in busy:
                watch = rng.choice(order)
            busy.add(watch)
            body, last[watch] = self.body(watch)
            due.put_nowait((at, watch, body))
        for _ in senders:
            due.put_nowait(None)
        await asyncio.gather(*senders)
        out.wall = loop.time() - start
        out.cpu = cpu_seconds(self.pid) - cpu0
        out.client_cpu = time.process_time() - client0
        out.pushes = n
        out.gets = await asyncio.to_thread(self.agent.gets) - gets0  # type: ignore[operator]
        out.stale_rows = await asyncio.to_thread(self.stale, last)
        return out

    async def run(self, rates: list[float], seconds: float, keep_going: bool = False) -> list[Step]:
        import httpx

        from tests.bench.live import Tab, follow
        from tests.bench.push_to_row import login_cookie

        cookie = await login_cookie(self.console.url)
        tab, closed = Tab(), list[str]()
        reader = asyncio.create_task(follow(self.console.ws_url + "/ws/console/watches/", cookie, tab, closed))
        one = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        clients = [httpx.AsyncClient(timeout=60, limits=one) for _ in range(SENDERS)]
        steps: list[Step] = []
        cpu0 = cpu_seconds(self.pid)
        await asyncio.sleep(IDLE_SECONDS)
        self.idle = (cpu_seconds(self.pid) - cpu0) / IDLE_SECONDS
        print(f"  console CPU with no pushes (its watches, the open tab): {100 * self.idle:.0f}% of a core")
        try:
            for rate in rates:
                s = await self.step(clients, rate, seconds)
                steps.append(s)
                report(s, self.idle)
                if not s.passed() and not keep_going:
                    break
        finally:
            reader.cancel()
            await asyncio.gather(reader, *(c.aclose() for c in clients), return_exceptions=True)
        print(f"  the open tab got {tab.frames} frames ({tab.bytes / 1e6:.1f} MB); sockets closed: {closed}")
        return steps

    def stop(self) -> None:
        self.console.stop()
        errors = [line for line in self.console.lines if "Traceback" in line or "ERROR" in line]
        if errors:
            print(f"  console output had {len(errors)} error lines, e.g. {errors[0][:200]}")


def report(s: Step, idle: float) -> None:
    """One step's line; CPU per push is the console's CPU over the step less its CPU with no pushes."""
    reached = s.pushes / s.wall if s.wall else 0.0
    lost = f"{len(s.lost)} ({sorted(set(s.lost))[:3]})" if s.lost else "0"
    print(
        f"  {s.rate:>5.0f}/s asked, {reached:6.1f}/s reached: answers {percentiles(s.answers)}; lost {lost}; "
        f"CPU per push {1000 * s.net_cpu(idle) / max(1, s.pushes):.2f} ms (console {100 * s.cpu / s.wall:.0f}% of a "
        "core, "
        f"this generator {100 * s.client_cpu / s.wall:.0f}%); GetTasks per push {s.gets / max(1, s.pushes):.3f}; "
        f"rows not showing their last push {s.stale_rows}; load {os.getloadavg()[0]:.2f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sdk", choices=("python", "js", "both"), default="both")
    ap.add_argument("--watches", type=int, default=1000)
    ap.add_argument("--rates", default="100,200,300,400,500,600,800,1000")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--keep-going", action="store_true", help="run every rate, past the first that fails")
    a = ap.parse_args()
    rates = [float(r) for r in a.rates.split(",")]
    for sdk in ("python", "js") if a.sdk == "both" else (a.sdk,):
        base = Path(tempfile.mkdtemp(prefix=f"a2a-bench-rate-{sdk}-"))
        agent = python_agent(base, a.watches) if sdk == "python" else js_agent(base, a.watches)
        print(
            f"{a.watches} push watches on a {agent.sdk} agent; {a.seconds:g} s at each rate; load "
            f"{os.getloadavg()[0]:.2f} before"
        )
        bench = None
        try:
            bench = Bench(agent, base)
            steps = asyncio.run(bench.run(rates, a.seconds, a.keep_going))
        finally:
            if bench is not None:
                bench.stop()
            agent.stop()  # type: ignore[operator]
        good = [s for s in steps if s.passed() and all(t.passed() for t in steps if t.rate < s.rate)]
        best = max(good, key=lambda s: s.rate) if good else None
        if best is None:
            print("  sustained: none of the rates passed")
        else:
            print(
                f"  sustained: {best.pushes / best.wall:.0f} pushes/s (p99 {best.p99():.1f} ms, none lost), CPU per "
                f"push {1000 * best.net_cpu(bench.idle) / best.pushes:.2f} ms, GetTasks per push "
                f"{best.gets / best.pushes:.3f}"
            )
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1 and 5 min) on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
