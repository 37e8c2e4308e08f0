"""Benchmark (a script, not collected by pytest): one registry holding many polled watches, then many finishing.

    .venv/bin/python tests/bench/watches.py [--watches 10000] [--finish 1000]

The agent is a real a2a-sdk JSON-RPC server in its own process (so its memory is not counted), whose
task store holds every task in `working`. The registry runs on a FakeClock: each poll round is one
`advance`, so rounds run as fast as the wire allows. Prints memory per watch (RSS growth / watches),
CPU per poll (process CPU of a round / GetTasks), and the time from "1,000 tasks complete" until all
1,000 results are delivered and gone from pending.json (that includes the poll round that sees them).
Targets: under 20 KB per watch; all settled within 10 s.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import heapq
import itertools
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from a2aconsole.core import pending

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


# the agent process


def run_agent(port_file: str, count: int) -> None:
    import socket

    import uvicorn
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.types import (
        AgentCapabilities,
        AgentCard,
        AgentInterface,
        Artifact,
        Part,
        Task,
        TaskState,
        TaskStatus,
    )
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from tests.bench.agent_parts import Idle, Store

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    card = AgentCard(
        name="bench",
        description="bench agent",
        version="1.0.0",
        supported_interfaces=[AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")],
        capabilities=AgentCapabilities(streaming=False, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
    )
    store = Store()
    for i in range(count):
        tid = f"task-{i:06d}"
        store.tasks[tid] = Task(
            id=tid, context_id=f"ctx-{i:06d}", status=TaskStatus(state=TaskState.TASK_STATE_WORKING)
        )

    async def finish(request: Any) -> JSONResponse:
        n = int(request.query_params.get("count", "0"))
        for i in range(n):
            t = store.tasks[f"task-{i:06d}"]
            t.status.state = TaskState.TASK_STATE_COMPLETED
            t.status.message.role = 2
            t.status.message.message_id = f"m{i}"
            t.status.message.parts.append(Part(text=f"done {i}"))
            t.artifacts.append(Artifact(artifact_id=f"a{i}", name="result", parts=[Part(text=f"result {i}")]))
        return JSONResponse({"finished": n})

    async def stats(request: Any) -> JSONResponse:
        return JSONResponse({"gets": store.gets})

    handler = DefaultRequestHandler(agent_executor=Idle(), task_store=store, agent_card=card)
    routes = create_agent_card_routes(card) + create_jsonrpc_routes(handler, rpc_url="/")
    routes += [Route("/bench/finish", finish, methods=["POST"]), Route("/bench/stats", stats)]
    server = uvicorn.Server(uvicorn.Config(Starlette(routes=routes), log_level="warning", lifespan="off"))
    Path(port_file).write_text(url)
    asyncio.run(server.serve(sockets=[sock]))


# the benchmark


class StepClock:
    """A fake clock for 10,000 sleepers: O(log n) per sleep and wake (the tests' FakeClock counts its sleepers
    by scanning them, fine for a few, quadratic here). `advance` wakes every sleeper that is due."""

    def __init__(self) -> None:
        from datetime import UTC, datetime

        self._wall = datetime(2026, 1, 1, tzinfo=UTC)
        self._mono = 0.0
        self._heap: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()
        self.sleeping = 0
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []

    def now(self) -> Any:
        from datetime import timedelta

        return self._wall + timedelta(seconds=self._mono)

    def monotonic(self) -> float:
        return self._mono

    async def sleep(self, seconds: float) -> None:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._heap, (self._mono + max(0.0, seconds), next(self._seq), fut))
        self.sleeping += 1
        for n, w in list(self._waiters):
            if self.sleeping >= n and not w.done():
                w.set_result(None)
        try:
            await fut
        finally:
            if not fut.done():  # cancelled, not woken
                fut.cancel()
                self.sleeping -= 1

    async def advance(self, seconds: float) -> None:
        target = self._mono + seconds
        while self._heap and self._heap[0][0] <= target:
            deadline, _, fut = heapq.heappop(self._heap)
            self._mono = max(self._mono, deadline)
            if not fut.done():
                fut.set_result(None)
                self.sleeping -= 1
        self._mono = target
        await asyncio.sleep(0)

    async def wait_for_sleepers(self, count: int, timeout: float = 600.0) -> None:
        while self.sleeping < count:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append((count, fut))
            try:
                await asyncio.wait_for(fut, timeout)
            finally:
                self._waiters.remove((count, fut))


async def bench(watches: int, finishing: int) -> dict[str, Any]:
    import httpx

    from a2aconsole.core.config import ClientSettings
    from a2aconsole.core.events import MemorySink
    from a2aconsole.core.files.workspace import Workspace
    from a2aconsole.core.pending.records import WatchRecord
    from a2aconsole.core.remote.client import Remote
    from a2aconsole.core.remote.http import new_http_client
    from a2aconsole.core.watches.delivery import StaticDelivery
    from a2aconsole.core.watches.registry import WatchRegistry

    tmp = Path(tempfile.mkdtemp(prefix="a2a-bench-"))
    port_file = tmp / "agent-url"
    agent = subprocess.Popen([sys.executable, __file__, "--agent", str(port_file), str(watches)], cwd=ROOT)  # noqa: ASYNC220
    try:
        while not port_file.exists() or not port_file.read_text():  # noqa: ASYNC110 (another process)
            await asyncio.sleep(0.05)
        url = port_file.read_text()
        async with httpx.AsyncClient() as probe:
            for _ in range(200):
                try:
                    await probe.get(url + ".well-known/agent-card.json")
                    break
                except httpx.HTTPError:
                    await asyncio.sleep(0.05)

        ws = Workspace(tmp / "ws")
        ws.save_agents([{"name": "bench", "url": url}], None)
        clock = StepClock()

        def records(ids: range) -> list[WatchRecord]:
            at = clock.now().isoformat()
            return [WatchRecord(f"w{i:06d}", "chat1", "bench", f"task-{i:06d}", f"ctx-{i:06d}", None, at) for i in ids]

        # The 9,000 others are armed and polled first; the 1,000 that will finish are armed later, so their
        # polls fall due on their own (as real watches, armed at different times, do) rather than inside a
        # round of 10,000 that a shared start would line up.
        async with pending.transaction(ws) as tx:
            tx.add(*records(range(finishing, watches)))
        del tx

        http = new_http_client()
        delivery = StaticDelivery({"chat1": ws})
        settled = asyncio.Event()

        class Settled(MemorySink):
            async def emit(self, event: Any) -> None:
                if event.kind == "delivered":
                    self.events.append(event)
                    if len(self.events) == finishing:
                        settled.set()

        registry = WatchRegistry(Remote(http, 60.0, 10.0), ClientSettings(), delivery, clock, Settled())
        gc.collect()
        base_rss = rss_bytes()

        t = time.perf_counter()
        await registry.start([ws])
        await clock.wait_for_sleepers(watches - finishing)
        arm_s = time.perf_counter() - t

        async def gets() -> int:
            async with httpx.AsyncClient() as c:
                return (await c.get(url + "bench/stats")).json()["gets"]

        rounds = []
        for step in (15.0, 30.0):  # each advance makes every armed watch poll once
            before_gets, cpu0, t0 = await gets(), time.process_time(), time.perf_counter()
            await clock.advance(step)
            await clock.wait_for_sleepers(watches - finishing)
            polls = await gets() - before_gets
            rounds.append(
                {"step": step, "polls": polls, "seconds": time.perf_counter() - t0, "cpu": time.process_time() - cpu0}
            )

        async with pending.transaction(ws) as tx:
            tx.add(*records(range(finishing)))
        del tx
        await registry.rescan(ws)  # as the worker does on a wake-up
        await clock.wait_for_sleepers(watches)
        gc.collect()
        all_rss = rss_bytes()

        async with httpx.AsyncClient() as c:
            await c.post(url + f"bench/finish?count={finishing}")
        t0 = time.perf_counter()
        await clock.advance(15.0)  # the 1,000 are due (the others not before +60 s): poll, see `completed`, settle
        await settled.wait()  # set by the sink on the last `delivered` event, emitted after the file write
        settle_s = time.perf_counter() - t0
        assert len(delivery.delivered) == finishing and len(pending.read(ws).records) == watches - finishing
        left = pending.read(ws).records
        assert all(r.undelivered is None for r in left)
        await registry.stop()
        await http.aclose()
        return {
            "watches": watches,
            "finishing": finishing,
            "arm_seconds": round(arm_s, 2),
            "memory_per_watch_kb": round((all_rss - base_rss) / watches / 1024, 2),
            "poll_rounds": [
                {
                    "step": r["step"],
                    "polls": r["polls"],
                    "round_seconds": round(r["seconds"], 2),
                    "cpu_ms_per_poll": round(r["cpu"] / max(r["polls"], 1) * 1000, 3),
                }
                for r in rounds
            ],
            "settle_seconds": round(settle_s, 2),
            "delivered": len(delivery.delivered),
        }
    finally:
        agent.kill()
        agent.wait()


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--agent":
        run_agent(sys.argv[2], int(sys.argv[3]))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--watches", type=int, default=10_000)
    parser.add_argument("--finish", type=int, default=1_000)
    args = parser.parse_args()
    result = asyncio.run(bench(args.watches, args.finish), debug=False)
    print(json.dumps(result, indent=2))
    ok = result["memory_per_watch_kb"] < 20 and result["settle_seconds"] < 10
    print("targets (< 20 KB per watch, < 10 s to settle):", "met" if ok else "NOT met")
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
