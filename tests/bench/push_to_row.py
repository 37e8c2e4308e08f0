"""Benchmark (a script, not collected by pytest): a push received -> the affected row updated in open tabs.

    .venv/bin/python -m tests.bench.push_to_row [--pushes 200] [--watches 20]
    .venv/bin/python -m tests.bench.push_to_row --tabs 10 --rate 50 --seconds 20 [--watches 500]
    .venv/bin/python -m tests.bench.push_to_row --said [--pushes 200]

The real console (`manage.py serve`: daphne, the embedded worker) runs on a fixed loopback port with
A2AClient__PushBaseUrl set to itself, and `--watches` watches in its workspace's pending.json on tasks of a real
a2a-sdk agent (its own process, push notifications on, every task `working`). At start each watch registers its
push config with the agent (CreateTaskPushNotificationConfig), so every row of the watches page says `push`.
A push is what an agent does when a task changes: its task's state changes (`working` <-> `submitted`), then it
POSTs the push to `/a2a/push/<watchId>` with the watch's token; the console wakes the watch, which confirms with
GetTask, stores the state event and updates the open tabs.

Default (one browser tab): a real Chromium tab on /watches/; a MutationObserver in the page notes, for every
row change, the row's watch, its state and `Date.now()`; the bench takes `time.time()` just before each push's
POST (the same host's wall clock). One push at a time, each after the previous row changed and at least
`--gap` seconds after it (a tab's renders are coalesced to one per LIVE_FLUSH_SECONDS = 0.25 s: a push after
a quiet moment is rendered at once; bursts are what coalescing is for). Prints p50/p95/p99/max of push POST ->
row changed, and of the push's HTTP answer. Target: p99 under 50 ms on a quiet machine. `--said`: pushes that
carry only a new status message (the state stays `working`), push POST -> the first frame with its text.

`--tabs N` (N WebSocket clients with the owner's session, no browser, spread over the table's pages of 50 rows
so every watch is in some tab): `--rate` pushes a second for `--seconds` to random watches, then waits until
every tab shows the last state of every row on its page. Prints how long after the last push
every tab was current (target: within 1 s), frames and bytes per tab, the push answers' p50/p99, and the
console process's CPU time over the burst from /proc/<pid>/stat (target: under one core).
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import json
import os
import socket
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from a2aconsole.core import pending

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

STATES = ("working", "submitted")  # both keep the task running: the watch stays, its row changes


# the agent process


def run_agent(port_file: str, count: int) -> None:
    import uvicorn
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryPushNotificationConfigStore
    from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Task, TaskState, TaskStatus
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from tests.bench.agent_parts import Idle, Store

    # proto given explicitly: asyncio sets TCP_NODELAY only on IPPROTO_TCP sockets (tests/support/agents.py)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    card = AgentCard(
        name="bench",
        description="bench agent: every task works until told otherwise",
        version="1.0.0",
        supported_interfaces=[AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")],
        capabilities=AgentCapabilities(streaming=False, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="work", name="Work", description="Works on a task", tags=["bench"])],
    )
    store = saying_store() if os.environ.get("A2A_BENCH_SAYING") else Store()
    for i in range(count):
        tid = f"task-{i:06d}"
        store.tasks[tid] = Task(
            id=tid, context_id=f"ctx-{i:06d}", status=TaskStatus(state=TaskState.TASK_STATE_WORKING)
        )
    pushes = InMemoryPushNotificationConfigStore()
    names = {"working": TaskState.TASK_STATE_WORKING, "submitted": TaskState.TASK_STATE_SUBMITTED}

    async def set_state(request: Request) -> JSONResponse:
        body = await request.json()
        store.tasks[body["task"]].status.state = names[body["state"]]
        return JSONResponse({"ok": True})

    async def gets(request: Request) -> JSONResponse:  # the task store's reads so far (push_rate: GetTasks)
        return JSONResponse({"gets": store.gets})

    handler = DefaultRequestHandler(agent_executor=Idle(), task_store=store, agent_card=card, push_config_store=pushes)
    routes = create_agent_card_routes(card) + create_jsonrpc_routes(handler, rpc_url="/")
    routes.append(Route("/bench/state", set_state, methods=["POST"]))
    routes.append(Route("/bench/gets", gets, methods=["GET"]))
    server = uvicorn.Server(uvicorn.Config(Starlette(routes=routes), log_level="warning", lifespan="off"))
    Path(port_file).write_text(url)
    asyncio.run(server.serve(sockets=[sock]))


def saying_store() -> object:
    """A task store whose every read finds a new status message on the task (`A2A_BENCH_SAYING=1`, push_rate): a
    GetTask after a push then sees news to store and show, as it would after a real agent's status message."""
    from a2a.types import Message, Part, Role

    from tests.bench.agent_parts import Store

    class SayingStore(Store):
        async def get(self, task_id: str, context: object = None) -> object:
            task = await super().get(task_id, context)
            if task is not None:
                text = f"said {self.gets}."
                said = Message(message_id=f"said-{self.gets}", role=Role.ROLE_AGENT, parts=[Part(text=text)])
                task.status.message.CopyFrom(said)
            return task

    return SayingStore()


# set-up: the agent, the console with its watches


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads), from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentiles(values: list[float]) -> str:
    v = sorted(values)
    if not v:
        return "no samples"

    def pick(q: float) -> float:
        return v[min(len(v) - 1, int(q * len(v)))]

    return f"p50 {pick(0.5):.1f} ms  p95 {pick(0.95):.1f} ms  p99 {pick(0.99):.1f} ms  max {v[-1]:.1f} ms"


class Setup:
    """The agent process and the console, with `watches` push watches w0..w<n-1> on tasks task-000000...."""

    def __init__(self, watches: int) -> None:
        import subprocess

        from tests.support.console_server import ConsoleServer

        self.base = Path(tempfile.mkdtemp(prefix="a2a-bench-push-"))
        port_file = self.base / "agent-url"
        self.agent = subprocess.Popen(
            [sys.executable, "-m", "tests.bench.push_to_row", "--agent", str(port_file), str(watches)], cwd=ROOT
        )
        atexit.register(self.agent.kill)  # a set-up that fails must not leave the agent holding our stdout
        while not port_file.exists() or not port_file.read_text():
            time.sleep(0.05)
        self.agent_url = port_file.read_text()
        port = free_port()
        self.console = ConsoleServer(self.base, port=port, A2AClient__PushBaseUrl=f"http://127.0.0.1:{port}")
        ws = self.console.workspace
        ws.root.mkdir(parents=True, exist_ok=True)
        ws.save_agents([{"name": "bench", "url": self.agent_url}], None)
        from a2aconsole.core.pending.records import WatchRecord

        at = datetime.now(UTC).isoformat()  # started now: a watch older than its timeout is dropped at start
        records = [
            WatchRecord(f"w{i}", "console", "bench", f"task-{i:06d}", f"ctx-{i:06d}", None, at) for i in range(watches)
        ]

        async def write() -> None:
            async with pending.transaction(ws) as tx:
                tx.add(*records)

        asyncio.run(write())
        self.watches = watches
        self.console.start(timeout=120)
        self.url = self.console.url
        # every watch has set its push config with the agent, and its token is in the file
        deadline = time.monotonic() + 120
        while True:
            recs = pending.read(ws).records
            if len(recs) == watches and all(r.source == "push" and r.push_token for r in recs):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"watches not on push: {[(r.watch_id, r.source) for r in recs][:5]}")
            time.sleep(0.2)
        # then the start's work (the watches' events, stored one by one) is done: a socket opened meanwhile waits
        # its turn behind it, past daphne's handshake timeout (5 s) with hundreds of watches on a busy machine
        pid = self.console.proc.pid  # type: ignore[union-attr]
        while time.monotonic() < deadline:
            cpu = cpu_seconds(pid)
            time.sleep(1.0)
            if cpu_seconds(pid) - cpu < 0.1:
                break
        self.tokens = {r.watch_id: str(r.push_token) for r in recs}
        self.tasks = {r.watch_id: r.task_id for r in recs}
        self.states = dict.fromkeys(self.tokens, "working")

    def next_state(self, watch: str) -> str:
        state = STATES[(STATES.index(self.states[watch]) + 1) % len(STATES)]
        self.states[watch] = state
        return state

    def push_body(self, watch: str, state: str) -> bytes:
        task = {"id": self.tasks[watch], "contextId": watch, "status": {"state": f"TASK_STATE_{state.upper()}"}}
        return json.dumps({"task": task}).encode()

    def said_body(self, watch: str, text: str) -> bytes:
        """A push that carries only a new status message: the state stays `working`."""
        message = {"messageId": text, "role": "ROLE_AGENT", "parts": [{"text": text}]}
        status = {"state": "TASK_STATE_WORKING", "message": message}
        return json.dumps(
            {"statusUpdate": {"taskId": self.tasks[watch], "contextId": watch, "status": status}}
        ).encode()

    def headers(self, watch: str) -> dict[str, str]:
        return {"X-A2A-Notification-Token": self.tokens[watch], "Content-Type": "application/json"}

    def stop(self) -> None:
        self.console.stop()

        self.agent.kill()
        self.agent.wait()
        tracebacks = [line for line in self.console.lines if "Traceback" in line or "ERROR" in line]
        if tracebacks:
            print(f"console output had {len(tracebacks)} error lines, e.g. {tracebacks[0]}")


# one browser tab: push POST -> row changed


# Before the page's scripts: note when each (small) WebSocket frame arrives, before htmx handles it.
FRAMES = """(() => {
  const Native = window.WebSocket;
  window.__frames = [];
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (e) => {
        if (typeof e.data === 'string' && e.data.length < 20000) window.__frames.push([Date.now(), e.data]);
      });
    }
  };
})();"""

OBSERVE = """() => {
  window.__rowChanges = [];
  const note = (row) => {
    const badge = row && row.querySelector('[data-task-state]');
    if (badge) window.__rowChanges.push([row.id.slice('watch-'.length), badge.dataset.taskState, Date.now()]);
  };
  new MutationObserver((records) => {
    const rows = new Set();
    for (const m of records) {
      const el = m.target.nodeType === 1 ? m.target : m.target.parentElement;
      const row = el && el.closest('tr[id^="watch-"]');
      if (row) rows.add(row);
      for (const n of m.addedNodes) {
        if (n.nodeType !== 1) continue;
        if (n.matches('tr[id^="watch-"]')) rows.add(n);
        n.querySelectorAll('tr[id^="watch-"]').forEach((r) => rows.add(r));
      }
    }
    rows.forEach(note);
  }).observe(document.body, {childList: true, subtree: true, attributes: true, characterData: true});
}"""


def said_bench(setup: Setup, pushes: int, gap: float) -> None:
    """`--said`: pushes that carry only a new status message (the state unchanged), one at a time: push POST -> the
    first frame in the tab that carries its text (the watch row's progress line)."""
    import httpx
    from playwright.sync_api import sync_playwright

    from tests.support.browser import launch, live, logged_in

    with sync_playwright() as p:
        browser = launch(p)
        ctx = logged_in(browser, setup.url)
        ctx.add_init_script(FRAMES)
        page = ctx.new_page()
        page.goto("/watches/")
        live(page)
        page.wait_for_function(f"() => document.querySelectorAll('tr[id^=\"watch-\"]').length === {setup.watches}")
        latencies, answers, shown, order = [], [], 0, list(setup.tokens)
        with httpx.Client(timeout=30) as http:
            for i in range(pushes):
                watch, text = order[i % len(order)], f"said {i + 1} of {pushes}."
                seen = page.evaluate("() => window.__frames.length")
                t0 = time.time()
                r = http.post(
                    f"{setup.url}/a2a/push/{watch}", content=setup.said_body(watch, text), headers=setup.headers(watch)
                )
                answers.append((time.time() - t0) * 1000)
                assert r.status_code == 200, (r.status_code, r.text)
                found = page.wait_for_function(
                    "([from, text]) => (window.__frames.slice(from).find((f) => f[1].includes(text)) || [null])[0]",
                    arg=[seen, text],
                    polling=5,
                    timeout=30_000,
                ).json_value()
                shown += 1
                latencies.append(found - t0 * 1000)
                time.sleep(gap)
        rows = page.evaluate("() => document.body.innerText")
        browser.close()
    print(f"{pushes} status-message-only pushes, one at a time ({gap:.2f} s apart), {setup.watches} watches, one tab:")
    print(f"  pushes whose text reached the tab: {shown} of {pushes}; the last one on the page: {text in rows}")
    print(f"  push POST -> its text in a frame: {percentiles(latencies)}  (target: p99 < 50 ms)")
    print(f"  push POST answered:               {percentiles(answers)}")


def browser_bench(setup: Setup, pushes: int, gap: float) -> None:
    import httpx
    from playwright.sync_api import sync_playwright

    from tests.support.browser import launch, live, logged_in

    with sync_playwright() as p:
        browser = launch(p)
        ctx = logged_in(browser, setup.url)
        ctx.add_init_script(FRAMES)
        page = ctx.new_page()
        page.goto("/watches/")
        live(page)
        page.wait_for_function(f"() => document.querySelectorAll('tr[id^=\"watch-\"]').length === {setup.watches}")
        page.evaluate(OBSERVE)
        latencies, answers, arrived, order = [], [], [], list(setup.tokens)
        with httpx.Client(timeout=30) as http:
            last_change = 0.0
            for i in range(pushes):
                watch = order[i % len(order)]
                state = setup.next_state(watch)
                http.post(setup.agent_url + "bench/state", json={"task": setup.tasks[watch], "state": state})
                time.sleep(max(0.0, last_change + gap - time.time()))
                seen = page.evaluate("() => [window.__rowChanges.length, window.__frames.length]")
                t0 = time.time()
                r = http.post(
                    f"{setup.url}/a2a/push/{watch}", content=setup.push_body(watch, state), headers=setup.headers(watch)
                )
                answers.append((time.time() - t0) * 1000)
                assert r.status_code == 200, (r.status_code, r.text)
                found = page.wait_for_function(
                    """([from, watch, state]) => window.__rowChanges.slice(from)
                         .find((c) => c[0] === watch && c[1] === state) || null""",
                    arg=[seen[0], watch, state],
                    polling=5,
                    timeout=30_000,
                ).json_value()
                last_change = found[2] / 1000
                latencies.append(found[2] - t0 * 1000)
                frame = page.evaluate(
                    """([from, row, state]) => (window.__frames.slice(from)
                         .find((f) => f[1].includes(row) && f[1].includes(state)) || [null])[0]""",
                    [seen[1], f'id="watch-{watch}"', f'data-task-state="{state}"'],
                )
                if frame is not None:
                    arrived.append(frame - t0 * 1000)
        browser.close()
    print(f"{pushes} pushes, one at a time (>= {gap:.2f} s apart), {setup.watches} push watches, one Chromium tab:")
    print(f"  push POST -> row changed in the tab: {percentiles(latencies)}  (target: p99 < 50 ms)")
    print(f"  push POST -> its frame in the tab:   {percentiles(arrived)}")
    print(f"  push POST answered:                  {percentiles(answers)}")
    print(f"  mean {statistics.mean(latencies):.1f} ms")


# many tabs: a burst of pushes


async def login_cookie(url: str) -> str:
    import re

    import httpx

    from tests.support.console_server import OWNER, PASSWORD

    async with httpx.AsyncClient(base_url=url, follow_redirects=False) as http:
        page = await http.get("/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert token, "no CSRF token on the login page"
        r = await http.post(
            "/login/",
            data={"username": OWNER, "password": PASSWORD, "csrfmiddlewaretoken": token.group(1)},
            headers={"Referer": f"{url}/login/"},
        )
        assert r.status_code == 302, (r.status_code, r.text[:300])
        return str(http.cookies["sessionid"])


async def tabs_bench(setup: Setup, tabs_n: int, rate: float, seconds: float) -> None:
    import httpx

    from a2aconsole.web.paging import WATCH_PAGE_SIZE as PAGE_SIZE
    from tests.bench.live import Tab, follow, until

    cookie = await login_cookie(setup.url)
    ws_url = setup.console.ws_url + "/ws/console/watches/"
    pages = -(-setup.watches // PAGE_SIZE)  # the table pages: the tabs are spread over them, every row in some tab
    page_of = [i % pages + 1 for i in range(tabs_n)]
    rows_of = [min(PAGE_SIZE, setup.watches - (p - 1) * PAGE_SIZE) for p in page_of]
    tabs, closed = [Tab() for _ in range(tabs_n)], []
    pairs = zip(tabs, page_of, strict=True)
    runs = [asyncio.create_task(follow(f"{ws_url}?page={p}", cookie, t, closed)) for t, p in pairs]

    def filled() -> bool:
        return all(len(t.states) == n for t, n in zip(tabs, rows_of, strict=True))

    await until(lambda: filled() or bool(closed), time.time() + 60)
    ok = filled()
    print(
        f"{tabs_n} tabs on pages {sorted(set(page_of))} of {setup.watches} watches ({PAGE_SIZE} a page), each with "
        f"every row of its page: {ok}; sockets closed: {closed}"
    )
    if not ok:
        return
    mine = [set(t.states) for t in tabs]  # the watches each tab's page shows
    before = [(t.frames, t.bytes) for t in tabs]
    import random

    rng, order, answers, failed = random.Random(7), list(setup.tokens), [], list[str]()
    limits = httpx.Limits(max_connections=100, max_keepalive_connections=100)
    async with httpx.AsyncClient(timeout=60, limits=limits) as http:

        async def one(watch: str, state: str) -> None:
            t0 = time.perf_counter()
            try:
                r = await http.post(
                    f"{setup.url}/a2a/push/{watch}", content=setup.push_body(watch, state), headers=setup.headers(watch)
                )
            except httpx.HTTPError as e:  # counted, not fatal: the agent would retry, the watch's next check sees it
                failed.append(type(e).__name__)
                return
            answers.append((time.perf_counter() - t0) * 1000)
            if r.status_code != 200:
                failed.append(str(r.status_code))

        loop = asyncio.get_running_loop()
        n = int(rate * seconds)
        pid = setup.console.proc.pid  # type: ignore[union-attr]
        cpu0, start = cpu_seconds(pid), loop.time()
        sent: list[asyncio.Task[None]] = []
        final: dict[str, str] = {}
        for i in range(n):
            await asyncio.sleep(max(0.0, start + i / rate - loop.time()))
            watch = rng.choice(order)
            final[watch] = setup.next_state(watch)
            # the agent's task changes in order (concurrent requests could land out of order), then it pushes
            await http.post(setup.agent_url + "bench/state", json={"task": setup.tasks[watch], "state": final[watch]})
            sent.append(asyncio.create_task(one(watch, final[watch])))
        await asyncio.gather(*sent)
        last = time.time()
        wall = loop.time() - start

        def behind() -> list[tuple[str, str | None, str]]:
            return [
                (w, t.states.get(w), s)
                for t, own in zip(tabs, mine, strict=True)
                for w, s in final.items()
                if w in own and t.states.get(w) != s
            ]

        current = await until(lambda: not behind(), last + 30)
        lag = time.time() - last
        stale = behind()
        cpu = cpu_seconds(pid) - cpu0
        busy = loop.time() - start
    frames = [t.frames - f for t, (f, _) in zip(tabs, before, strict=True)]
    sent_bytes = sum(t.bytes - b for t, (_, b) in zip(tabs, before, strict=True))
    print(f"burst: {n} pushes in {wall:.1f} s on {len(final)} of {setup.watches} watches; not 200: {failed[:5]}")
    print(f"  every tab current {lag:.2f} s after the last push's answer: {current}  (target: within 1 s)")
    if stale:
        print(f"  rows not current ({len(stale)} in all tabs; watch, shown, last pushed): {stale[:5]}")
    print(f"  frames per tab: min {min(frames)}, max {max(frames)}; {sent_bytes / 1e6:.1f} MB to {tabs_n} tabs")
    print(f"  push POST answered: {percentiles(answers)}")
    print(
        f"  console process CPU from the first push until every tab was current: {cpu:.1f} s in {busy:.1f} s "
        f"({100 * cpu / busy:.0f}% of one core; target under 100%)"
    )
    for r in runs:
        r.cancel()
    await asyncio.gather(*runs, return_exceptions=True)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--agent":
        run_agent(sys.argv[2], int(sys.argv[3]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--pushes", type=int, default=200, help="one browser tab: pushes, one at a time")
    ap.add_argument("--gap", type=float, default=0.3, help="seconds between a row's change and the next push")
    ap.add_argument("--watches", type=int, default=0, help="push watches (default 20; 500 with --tabs)")
    ap.add_argument("--tabs", type=int, default=0, help="WebSocket tabs under a burst instead of one browser tab")
    ap.add_argument("--said", action="store_true", help="one browser tab: pushes that carry only a status message")
    ap.add_argument("--rate", type=float, default=50)
    ap.add_argument("--seconds", type=float, default=20)
    a = ap.parse_args()
    setup = Setup(a.watches or (500 if a.tabs else 20))
    try:
        if a.tabs:
            asyncio.run(tabs_bench(setup, a.tabs, a.rate, a.seconds))
        elif a.said:
            said_bench(setup, a.pushes, a.gap)
        else:
            browser_bench(setup, a.pushes, a.gap)
    finally:
        setup.stop()
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1 and 5 min) on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
