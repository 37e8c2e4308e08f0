"""Benchmark (a script, not collected by pytest): a real `manage.py serve` restoring thousands of push and
subscribe watches from pending.json, while a browser reads pages and an operator stops it.

    .venv/bin/python tests/bench/restore.py [--watches 10000] [--push-share 0.5] [--profile out.svg]

Two a2a-sdk JSON-RPC agents run in processes of their own, each task in `working` and never finishing: a push
agent (push and streaming) and a stream agent (streaming only; SubscribeToTask holds the stream open). Both
count the calls they answer: how many are in flight at once, and which tasks are re-armed (push: its config
created, then its GetTask answered or the task on a ListTasks page answered after; subscribe: its stream opened,
or, past the console's bound on open streams, its GetTask answered or the task on any ListTasks page: an upper
bound). The console runs as `manage.py serve` on its own data and workspace folders.

Run 1 measures the seconds from "serving on" until every watch is re-armed, and the latency of the dashboard
(GET / as the logged-in owner, one every 100 ms) meanwhile: p50 / p99 / max. Run 2 starts the console again
on the same files and sends SIGTERM 2 s into the restore: seconds until the process exits, and every record
still in pending.json. Targets: re-armed within 60 s, pages under 200 ms (p99 of the audit page; the dashboard's
own cost grows with the records, so its figures after the restore are printed beside), exit within 5 s.
`--profile` runs py-spy on the console during run 1 (a flame graph; needs `pip install py-spy`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from a2aconsole.core import pending

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

PASSWORD = "a bench owner password 7"
PAGE_EVERY = 0.1


# the agent processes


def run_agent(port_file: str, kind: str, count: int) -> None:
    """Serve `count` working tasks named `<kind>-NNNNNN`; `kind` is `push` (push + streaming) or `sub`."""
    import uvicorn
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryPushNotificationConfigStore
    from a2a.types import AgentCapabilities, AgentCard, AgentInterface, Task, TaskState, TaskStatus
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from tests.bench.agent_parts import Idle, Store

    class Handler(DefaultRequestHandler):
        async def on_subscribe_to_task(self, params: Any, context: Any) -> Any:
            """The task, then nothing until the client goes (a task that works for ever)."""
            task = await self.task_store.get(params.id, context)
            yield task
            await asyncio.Event().wait()

    stats: dict[str, Any] = {
        "inflight": 0,
        "max_inflight": 0,
        "streams": 0,
        "max_streams": 0,
        "methods": {},
    }
    created: set[str] = set()
    armed: set[str] = set()

    class Count:
        """Counts calls in flight (streams apart) and marks a task re-armed when its answer goes out."""

        def __init__(self, app: Any) -> None:
            self.app = app

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != "/":
                await self.app(scope, receive, send)
                return
            body = b""
            more = True
            while more:
                msg = await receive()
                body += msg.get("body", b"")
                more = msg.get("more_body", False)
            req = json.loads(body)
            method, params = req.get("method", ""), req.get("params") or {}
            task_id = params.get("taskId") or params.get("id") or ""
            stats["methods"][method] = stats["methods"].get(method, 0) + 1
            stream = method == "SubscribeToTask"
            field = "streams" if stream else "inflight"
            stats[field] += 1
            stats["max_" + field] = max(stats["max_" + field], stats[field])
            answered = False
            listed = b""
            created_then = set(created) if method == "ListTasks" else set()  # a page re-arms the tasks set up before

            async def replay() -> Any:
                nonlocal body
                if body is not None:
                    b, body = body, None
                    return {"type": "http.request", "body": b, "more_body": False}
                return await receive()

            async def counted(message: Any) -> None:
                nonlocal answered, listed
                await send(message)
                if message["type"] == "http.response.body" and method == "ListTasks" and not answered:
                    listed += message.get("body", b"")
                    if not message.get("more_body", False):
                        answered = True
                        tasks = json.loads(listed).get("result", {}).get("tasks", [])
                        # a stream agent's page: every task on it (an upper bound: a watch may not wait on it yet)
                        armed.update(t["id"] for t in tasks if kind == "sub" or t.get("id") in created_then)
                elif message["type"] == "http.response.body" and not answered:
                    answered = True
                    if method == "CreateTaskPushNotificationConfig":
                        created.add(task_id)
                    elif stream or (method == "GetTask" and (kind == "sub" or task_id in created)):
                        armed.add(task_id)

            try:
                await self.app(scope, replay, counted)
            finally:
                stats[field] -= 1

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    card = AgentCard(
        name=f"bench-{kind}",
        description="bench agent",
        version="1.0.0",
        supported_interfaces=[AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")],
        capabilities=AgentCapabilities(streaming=True, push_notifications=kind == "push"),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
    )
    store = Store()
    for i in range(count):
        tid = f"{kind}-{i:06d}"
        store.tasks[tid] = Task(id=tid, context_id=f"ctx-{tid}", status=TaskStatus(state=TaskState.TASK_STATE_WORKING))

    async def read_stats(request: Any) -> JSONResponse:
        return JSONResponse({**stats, "armed": len(armed)})

    async def reset(request: Any) -> JSONResponse:
        created.clear()
        armed.clear()
        stats.update(max_inflight=stats["inflight"], max_streams=stats["streams"], methods={})
        return JSONResponse({})

    handler = Handler(
        agent_executor=Idle(),
        task_store=store,
        agent_card=card,
        push_config_store=InMemoryPushNotificationConfigStore() if kind == "push" else None,
    )
    routes = create_agent_card_routes(card) + create_jsonrpc_routes(handler, rpc_url="/")
    routes += [Route("/bench/stats", read_stats), Route("/bench/reset", reset, methods=["POST"])]
    app = Count(Starlette(routes=routes))
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", lifespan="off", backlog=4096, timeout_keep_alive=120)
    )
    Path(port_file).write_text(url)
    asyncio.run(server.serve(sockets=[sock]))


# the console process


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux)."""
    return sum(cpu_split(pid))


def cpu_split(pid: int) -> tuple[float, float]:
    """User and system CPU seconds of a process so far (Linux): the system's is mostly the loopback's TCP."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Console:
    """`manage.py serve` on the bench's folders; `lines` is what it printed."""

    def __init__(self, tmp: Path, port: int, cprofile: str | None = None) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("A2ACONSOLE_", "A2AClient__", "A2A__"))}
        env.update(
            A2ACONSOLE_DATA=str(tmp / "data"),
            A2ACONSOLE_WORKSPACE=str(tmp / "ws"),
            A2ACONSOLE_OWNER_PASSWORD=PASSWORD,
            A2AClient__PushBaseUrl=f"http://127.0.0.1:{port}",
            PYTHONUNBUFFERED="1",
        )
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, *(["-m", "cProfile", "-o", cprofile] if cprofile else []), "manage.py", "serve"]
            + ["--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        self.serving = threading.Event()
        threading.Thread(target=self._pump, daemon=True).start()
        self.url = f"http://127.0.0.1:{port}"

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)
            if "serving on" in line:
                self.serving_at = time.monotonic()
                self.serving.set()

    def wait_serving(self, timeout: float = 120.0) -> float:
        if not self.serving.wait(timeout):
            raise RuntimeError("the console did not start:\n" + "".join(self.lines[-40:]))
        return self.serving_at

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60.0) -> float:
        """Send `sig`; seconds until the process exited (kills it past `timeout`)."""
        t = time.monotonic()
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return time.monotonic() - t


class Pages(threading.Thread):
    """The owner's browser: logs in, then every 100 ms GETs a page and records each latency: the audit log (a
    page of the database: how fast the process answers at all), and every tenth time the dashboard instead. The
    dashboard reads every record of pending.json per view, about 60 ms of CPU at 10,000 records: ten a second
    would take the console's CPU from the restore it measures."""

    PATHS = ("/", "/audit/")

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.latencies: list[tuple[str, float]] = []
        self.errors: list[str] = []
        self.done = threading.Event()

    def run(self) -> None:
        import httpx

        with httpx.Client(base_url=self.url, timeout=30) as http:
            page = http.get("/login/")
            token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
            assert token is not None, page.text[:300]
            form = {"username": "owner", "password": PASSWORD, "csrfmiddlewaretoken": token.group(1)}
            done = http.post("/login/", data=form, headers={"Origin": self.url})
            assert done.status_code == 302, (done.status_code, done.text[:300])
            for i in itertools.count():
                if self.done.is_set():
                    break
                path = self.PATHS[0] if i % 10 == 0 else self.PATHS[1]
                t = time.monotonic()
                try:
                    r = http.get(path)
                    if r.status_code != 200:
                        self.errors.append(f"HTTP {r.status_code}")
                except httpx.HTTPError as e:
                    self.errors.append(type(e).__name__)
                took = time.monotonic() - t
                self.latencies.append((path, took))
                self.done.wait(max(0.0, PAGE_EVERY - took))


def summary(latencies: list[tuple[str, float]]) -> dict[str, dict[str, float]]:
    """p50 / p99 / max per page, and over all pages."""
    out = {}
    for path in (*Pages.PATHS, "all"):
        ms = sorted(x * 1000 for p, x in latencies if path in (p, "all"))
        if ms:
            out[path] = {
                "count": len(ms),
                "p50_ms": round(statistics.median(ms), 1),
                "p99_ms": round(ms[min(len(ms) - 1, int(len(ms) * 0.99))], 1),
                "max_ms": round(ms[-1], 1),
            }
    return out


def start_agent(tmp: Path, kind: str, count: int) -> tuple[subprocess.Popen[bytes], str]:
    port_file = tmp / f"agent-{kind}"
    proc = subprocess.Popen([sys.executable, __file__, "--agent", str(port_file), kind, str(count)], cwd=ROOT)
    deadline = time.monotonic() + 60
    while not port_file.exists() or not port_file.read_text():
        if time.monotonic() > deadline:
            raise RuntimeError(f"the {kind} agent did not start")
        time.sleep(0.05)
    return proc, port_file.read_text()


def stats(http: Any, url: str) -> dict[str, Any]:
    return http.get(url + "bench/stats").json()


def write_pending(ws_dir: Path, push_url: str, sub_url: str, pushes: int, subs: int) -> None:
    from datetime import UTC, datetime

    from a2aconsole.core.files.workspace import Workspace
    from a2aconsole.core.pending.records import WatchRecord

    ws = Workspace(ws_dir)
    ws.save_agents([{"name": "pusher", "url": push_url}, {"name": "streamer", "url": sub_url}], None)
    at = datetime.now(UTC).isoformat()
    working = {"state": "working"}  # as the tool writes it: the state the send saw
    records = [
        WatchRecord(
            f"wp{i:06d}",
            "console",
            "pusher",
            f"push-{i:06d}",
            f"ctx-{i}",
            f"token-{i:06d}-" + "x" * 32,
            at,
            "push",
            extra=dict(working),
        )
        for i in range(pushes)
    ]
    records += [
        WatchRecord(
            f"ws{i:06d}", "console", "streamer", f"sub-{i:06d}", f"ctx-{i}", None, at, "subscribe", extra=dict(working)
        )
        for i in range(subs)
    ]

    async def write() -> None:
        async with pending.transaction(ws) as tx:
            tx.add(*records)

    asyncio.run(write())


def bench(watches: int, push_share: float, profile: str | None, limit: float, cprofile: str | None) -> dict[str, Any]:
    import httpx

    pushes = round(watches * push_share)
    subs = watches - pushes
    tmp = Path(tempfile.mkdtemp(prefix="a2a-restore-"))
    agents = []
    try:
        push_agent, push_url = start_agent(tmp, "push", pushes)
        agents.append(push_agent)
        sub_agent, sub_url = start_agent(tmp, "sub", subs)
        agents.append(sub_agent)
        write_pending(tmp / "ws", push_url, sub_url, pushes, subs)
        http = httpx.Client(timeout=30)

        # run 1: time to re-armed, page latency meanwhile
        console = Console(tmp, free_port(), cprofile)
        spy = None
        serving = console.wait_serving()
        if profile:
            spy = subprocess.Popen(
                [
                    shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy"),
                    "record",
                    "--threads",
                    "-o",
                    profile,
                    "-p",
                    str(console.proc.pid),
                ]
                + {".json": ["-f", "speedscope"], ".txt": ["-f", "raw"]}.get(Path(profile).suffix, []),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        pages = Pages(console.url)
        pages.start()
        cpu0 = cpu_split(console.proc.pid)
        agents_cpu0 = sum(cpu_seconds(a.pid) for a in agents)
        armed_at = None
        progress = []
        while time.monotonic() - serving < limit:
            p, s = stats(http, push_url), stats(http, sub_url)
            progress.append((round(time.monotonic() - serving, 1), p["armed"], s["armed"]))
            if p["armed"] >= pushes and s["armed"] >= subs:
                armed_at = time.monotonic()
                cpu = tuple(b - a for a, b in zip(cpu0, cpu_split(console.proc.pid), strict=True))
                agents_cpu = sum(cpu_seconds(a.pid) for a in agents) - agents_cpu0
                break
            if console.proc.poll() is not None:
                break
            time.sleep(0.5)
        during = list(pages.latencies)
        time.sleep(3)  # the dashboard once the restore is done: its own cost with this many records
        after = pages.latencies[len(during) :]
        pages.done.set()
        pages.join(30)
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(60)
        p, s = stats(http, push_url), stats(http, sub_url)
        first_exit = console.stop()
        run1 = {
            "rearmed_seconds": round(armed_at - serving, 2) if armed_at else None,
            "console_cpu_seconds_until_rearmed": round(sum(cpu), 2) if armed_at else None,
            "of_which_user_system": [round(c, 2) for c in cpu] if armed_at else None,
            "agents_cpu_seconds_until_rearmed": round(agents_cpu, 2) if armed_at else None,
            "load_average": os.getloadavg(),
            "rearmed": {"push": p["armed"], "subscribe": s["armed"]},
            "progress_every_5s": [x for i, x in enumerate(progress) if i % 10 == 0],
            "pages_during_restore": summary(during),
            "pages_after_restore": summary(after),
            "page_errors": pages.errors[:5],
            "push_agent": {k: p[k] for k in ("max_inflight", "max_streams", "methods")},
            "stream_agent": {k: s[k] for k in ("max_inflight", "max_streams", "methods")},
            "sigterm_exit_seconds_after_restore": round(first_exit, 2),
        }
        if console.proc.returncode not in (0, -signal.SIGTERM):
            run1["exit_code"] = console.proc.returncode

        # run 2: SIGTERM during the restore
        for url in (push_url, sub_url):
            http.post(url + "bench/reset")
        console = Console(tmp, free_port())
        console.wait_serving()
        time.sleep(2.0)
        armed_then = stats(http, push_url)["armed"] + stats(http, sub_url)["armed"]
        exit_s = console.stop()
        from a2aconsole.core.files.workspace import Workspace

        kept = len(pending.read(Workspace(tmp / "ws")).records)
        run2 = {
            "rearmed_when_signalled": armed_then,
            "sigterm_exit_seconds": round(exit_s, 2),
            "exit_code": console.proc.returncode,
            "records_kept": kept,
            "last_lines": [x.rstrip() for x in console.lines[-3:]],
        }
        import sqlite3

        with contextlib.closing(sqlite3.connect(tmp / "data" / "db.sqlite3")) as db:
            rows = db.execute("select kind, count(*) from web_taskevent group by kind").fetchall()
        events = dict(rows)
        return {
            "watches": watches,
            "push": pushes,
            "subscribe": subs,
            "run1": run1,
            "run2": run2,
            "events_stored": events,
        }
    finally:
        for a in agents:
            a.kill()
            a.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--agent":
        run_agent(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--watches", type=int, default=10_000)
    parser.add_argument("--push-share", type=float, default=0.5)
    parser.add_argument("--profile", help="py-spy output file (.svg flame graph, .json speedscope)")
    parser.add_argument("--cprofile", help="run the console of run 1 under cProfile, its stats to this file")
    parser.add_argument("--limit", type=float, default=180.0, help="give up waiting for the re-arm after this")
    args = parser.parse_args()
    result = bench(args.watches, args.push_share, args.profile, args.limit, args.cprofile)
    print(json.dumps(result, indent=2))
    r1, r2 = result["run1"], result["run2"]
    ok = (
        r1["rearmed_seconds"] is not None
        and r1["rearmed_seconds"] < 60
        and r1["pages_during_restore"].get("/audit/", {}).get("p99_ms", 1e9) < 200
        and r2["sigterm_exit_seconds"] < 5
        and r2["records_kept"] == result["watches"]
    )
    print(
        "targets (re-armed < 60 s, /audit/ p99 < 200 ms, SIGTERM exit < 5 s, no record lost):",
        "met" if ok else "NOT met",
    )
    print("(the dashboard reads all of pending.json per view: compare its latency during and after the restore)")
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
