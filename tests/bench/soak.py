"""Soak (a script, not collected by pytest): the embedded console SIGKILLed again and again while chats send.

    .venv/bin/python tests/bench/soak.py [--kills 50] [--quick] [--seed N] [--keep]

The real `manage.py serve` (tests/support/console_server.py) runs on a fixed loopback port with its own data
folder, one chat target `soak` (web inbox) and three real a2a-sdk agents: `push` (push, no streaming: the
console's push receiver at A2AClient__PushBaseUrl), `subscribe` (streaming) and `poll` (neither). Three
senders call the target's JSON API (`send`, `slow <1.5-8 s>`, WaitSeconds 1, so each result reaches the
inbox through a watch) whenever the console is up. The console is killed `--kills` times, each after a
random 0.5-5 s of serving (so kills land in restores, sends, claims, deliveries, pushes), then started
once more and left to drain. Then, from the console's database and the agents' own records:

- confirmed: sends whose API answer came back with a task id; **lost**: confirmed tasks not in the inbox;
- **duplicated**: tasks with more than one inbox item;
- unconfirmed: tasks the agents created whose send answer never came back (the console died during the
  send's wait), and how many of those reached the inbox anyway;
- history: delivered tasks without exactly one `result` and one `watch.ended` event;
- worst (and median) time to deliver: from the send's start to the inbox row.

Target: 0 lost, 0 duplicated. About 4-5 minutes at the default size on a busy 2-core machine; `--quick`
(5 kills) takes well under a minute.
"""

from __future__ import annotations

import argparse
import logging
import random
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx

from a2aconsole.core import pending

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.support.agents import TestAgent, start_agent  # noqa: E402
from tests.support.console_server import ConsoleServer  # noqa: E402

TARGET = "soak"
AGENTS = {
    "push": {"push": True, "streaming": False},
    "subscribe": {"push": False, "streaming": True},
    "poll": {"push": False, "streaming": False},
}
DRAIN_SECONDS = 120.0
SENDERS = 3
UP_SECONDS = (0.5, 5.0)  # how long the console serves before each kill


@dataclass
class Sent:
    agent: str
    started: float  # wall clock, seconds
    task_id: str


@dataclass
class Tally:
    confirmed: list[Sent] = field(default_factory=list)
    refused: int = 0  # the console was down: nothing was sent
    broken: int = 0  # the answer never came back (killed mid-call)
    other: list[str] = field(default_factory=list)  # answers that are neither a task nor a refusal
    lock: threading.Lock = field(default_factory=threading.Lock)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def manage(env: dict[str, str], *args: str) -> str:
    out = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return out.stdout


def sender(url: str, token: str, tally: Tally, stop: threading.Event, seed: int) -> None:
    rng = random.Random(seed)
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(timeout=30.0) as http:
        while not stop.is_set():
            agent = rng.choice(list(AGENTS))
            body = {"action": "send", "agent": agent, "message": f"slow {rng.uniform(1.5, 8.0):.2f}"}
            started = time.time()
            try:
                r = http.post(f"{url}/api/v1/targets/{TARGET}/tool", json=body, headers=headers)
            except httpx.ConnectError:
                with tally.lock:
                    tally.refused += 1
                stop.wait(0.2)
                continue
            except httpx.TransportError:
                with tally.lock:
                    tally.broken += 1
                continue
            answer = r.json() if r.headers.get("content-type", "").startswith("application/json") else {}
            with tally.lock:
                if r.status_code == 200 and answer.get("taskId") and answer.get("state") == "working":
                    tally.confirmed.append(Sent(agent, started, answer["taskId"]))
                else:
                    tally.other.append(f"{r.status_code} {str(answer)[:160]}")
            stop.wait(rng.uniform(0.1, 0.6))


def read_db(path: Path, sql: str) -> list[tuple]:
    db = sqlite3.connect(path, timeout=30)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def stamp(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=50)
    ap.add_argument("--quick", action="store_true", help="5 kills (a minute)")
    ap.add_argument("--seed", type=int, default=20261203)
    ap.add_argument("--keep", action="store_true", help="keep the data folder and workspace for a look")
    args = ap.parse_args()
    kills = 5 if args.quick else args.kills
    rng = random.Random(args.seed)
    base = Path(tempfile.mkdtemp(prefix="a2a-soak-"))
    t0 = time.monotonic()

    logging.disable(logging.CRITICAL)  # the agents' push sender reports every push the dead console missed
    agents: dict[str, TestAgent] = {name: start_agent(name=name, **opts) for name, opts in AGENTS.items()}
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {"A2AClient__PushBaseUrl": url, "A2AClient__WaitSeconds": "1"}
    console = ConsoleServer(base, port=port, **env)
    target_ws = base / "target-ws"
    target_ws.mkdir(parents=True)
    from a2aconsole.core.files.workspace import Workspace

    ws = Workspace(target_ws)
    ws.save_agents([{"name": name, "url": a.url} for name, a in agents.items()], None)
    (base / "data").mkdir(parents=True)
    console.workspace.root.mkdir(parents=True)
    manage(console.env, "migrate", "--no-input")
    manage(console.env, "targets", "add", TARGET, "--name", "Soak", "--workspace", str(target_ws), "--backend", "web")
    token = manage(console.env, "targets", "token", TARGET).strip().splitlines()[-1]  # printed once, last

    tally = Tally()
    stop = threading.Event()
    senders = [threading.Thread(target=sender, args=(url, token, tally, stop, args.seed + i)) for i in range(SENDERS)]
    for t in senders:
        t.start()
    starts: list[float] = []
    errors = 0
    try:
        for i in range(kills):
            t = time.monotonic()
            console.start(timeout=60)
            starts.append(time.monotonic() - t)
            time.sleep(rng.uniform(*UP_SECONDS))
            console.kill()
            errors += sum("Traceback" in line for line in console.lines)
            console.lines.clear()
            if (i + 1) % 10 == 0 or i + 1 == kills:
                print(f"kill {i + 1}/{kills}: {len(tally.confirmed)} sends confirmed", flush=True)
        stop.set()
        for t in senders:
            t.join(timeout=60)

        # everyone's tasks end within 8 s of their send; then the console restores and delivers them all
        console.start(timeout=60)
        want = {s.task_id for s in tally.confirmed}
        db = base / "data" / "db.sqlite3"
        deadline = time.monotonic() + DRAIN_SECONDS
        while time.monotonic() < deadline:
            got = {t for (t,) in read_db(db, f"SELECT task_id FROM web_inboxitem WHERE target_id = '{TARGET}'")}
            if want <= got and not pending.read(ws).records:
                break
            time.sleep(0.5)
        drained = time.monotonic() + DRAIN_SECONDS - deadline
        console.stop()
        errors += sum("Traceback" in line for line in console.lines)
    finally:
        stop.set()
        console.kill()
        for a in agents.values():
            a.stop()

    inbox = read_db(db, f"SELECT task_id, created_at FROM web_inboxitem WHERE target_id = '{TARGET}'")
    per_task: dict[str, list[float]] = {}
    for task_id, created in inbox:
        per_task.setdefault(task_id, []).append(stamp(created))
    events = read_db(db, "SELECT task_id, kind FROM web_taskevent WHERE kind IN ('result', 'watch.ended')")
    counts: dict[tuple[str, str], int] = {}
    for task_id, kind in events:
        counts[(task_id, kind)] = counts.get((task_id, kind), 0) + 1
    created = {r.task_id for a in agents.values() for r in a.received}
    confirmed = {s.task_id: s for s in tally.confirmed}
    lost = [t for t in confirmed if t not in per_task]
    duplicated = [t for t, rows in per_task.items() if len(rows) > 1]
    unconfirmed = created - set(confirmed)
    history_off = [t for t in per_task if (counts.get((t, "result")), counts.get((t, "watch.ended"))) != (1, 1)]
    waits = [min(per_task[t]) - s.started for t, s in confirmed.items() if t in per_task]
    worst = {
        name: max(
            (min(per_task[t]) - s.started for t, s in confirmed.items() if t in per_task and s.agent == name),
            default=0.0,
        )
        for name in AGENTS
    }
    by_agent = {name: sum(1 for s in tally.confirmed if s.agent == name) for name in AGENTS}

    up = f"{UP_SECONDS[0]}-{UP_SECONDS[1]} s"
    print(f"kills: {kills} (console up {up} each; a start took median {statistics.median(starts):.1f} s)")
    print(
        f"sends: {len(confirmed)} confirmed ({', '.join(f'{k} {v}' for k, v in by_agent.items())}), "
        f"{tally.refused} refused while down, {tally.broken} cut by a kill, {len(tally.other)} other answers"
    )
    print(f"lost: {len(lost)}")
    print(f"duplicated: {len(duplicated)}")
    print(
        f"unconfirmed tasks (console died during the send): {len(unconfirmed)}, "
        f"{len(unconfirmed & set(per_task))} of them delivered anyway"
    )
    print(f"history mismatches (not exactly one result + one watch.ended): {len(history_off)}")
    if waits:
        print(
            f"time to deliver: worst {max(waits):.1f} s ({', '.join(f'{k} {v:.1f}' for k, v in worst.items())}),"
            f" median {statistics.median(waits):.1f} s"
        )
    print(f"drain after the last start: {drained:.1f} s; tracebacks in the console's output: {errors}")
    print(f"total: {time.monotonic() - t0:.0f} s")
    for line in tally.other[:5]:
        print("  other answer:", line)
    for t in lost[:10]:
        print("  lost:", confirmed[t].agent, t)
    if args.keep:
        print(f"data kept in {base}")
    else:
        shutil.rmtree(base, ignore_errors=True)
    return 1 if lost or duplicated or history_off or not confirmed else 0


if __name__ == "__main__":
    sys.exit(main())
