"""A worker killed with SIGKILL while watches are armed loses nothing: restarted, it delivers every result."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from a2aconsole.core import pending
from a2aconsole.core.clock import SystemClock
from tests.support.watching import add_record, eventually, start_task
from tests.support.worker_env import ROOT


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator:
    procs: list[subprocess.Popen] = []

    def start(ws_root: Path, out: Path) -> subprocess.Popen:
        p = subprocess.Popen([sys.executable, "-m", "tests.support.watch_process", str(ws_root), str(out)], cwd=ROOT)
        procs.append(p)
        return p

    yield start
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait(timeout=10)


@pytest.fixture
def spawn_send() -> Iterator:
    """`send` in a process of its own (tests.support.send_process), killed at the end if still running."""
    procs: list[subprocess.Popen] = []

    def start(ws_root: Path, agent: str, message: str, wait_seconds: int) -> subprocess.Popen:
        args = [str(ws_root), agent, message, str(wait_seconds)]
        p = subprocess.Popen(
            [sys.executable, "-m", "tests.support.send_process", *args], cwd=ROOT, stdout=subprocess.DEVNULL
        )
        procs.append(p)
        return p

    yield start
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait(timeout=10)


def delivered(out: Path) -> list[dict]:
    if not out.exists():
        return []
    return [json.loads(line) for line in out.read_text().splitlines() if line.strip()]


async def test_worker_killed_with_armed_watches_loses_nothing(
    make_sdk_agent, workspace, remote, spawn, tmp_path
) -> None:
    agent = make_sdk_agent(push=False)  # streaming: results arrive at once, no 15 s poll waits
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    clock = SystemClock()
    tasks = [await start_task(remote, workspace, "bot", f"hold k{i}") for i in range(5)]
    records = [await add_record(workspace, t, "bot", clock, source="subscribe") for t in tasks]
    out = tmp_path / "delivered.jsonl"

    first = spawn(workspace.root, out)
    await eventually(lambda: agent.methods.count("SubscribeToTask") >= 5, what="5 subscriptions")
    agent.release("k0")
    agent.release("k1")
    await eventually(lambda: len(delivered(out)) >= 2, what="2 deliveries")
    os.kill(first.pid, signal.SIGKILL)  # three watches armed, two results done
    first.wait(timeout=10)
    for i in (2, 3, 4):  # they finish while no worker runs
        agent.release(f"k{i}")
    await eventually(lambda: len(agent.finished) == 5, what="the agent to finish all tasks")

    spawn(workspace.root, out)
    want = {r.watch_id for r in records}
    await eventually(lambda: {d["watchId"] for d in delivered(out)} == want, timeout=30, what="all results")
    await eventually(lambda: pending.read(workspace).records == [], what="pending.json to empty")
    by_watch = {d["watchId"]: d["text"] for d in delivered(out)}
    for i, rec in enumerate(records):
        assert f"released k{i}" in by_watch[rec.watch_id]


def sending(ws) -> list:
    return [r for r in pending.read(ws).records if r.state == "sending"]


async def test_send_killed_during_its_wait_is_delivered_after_restart(
    make_sdk_agent, workspace, spawn, spawn_send, tmp_path
) -> None:
    """Issue 11 item 1: the record is written when the agent returns the task id, before the wait."""
    agent = make_sdk_agent(push=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    sender = spawn_send(workspace.root, "bot", "hold s1", 60)
    try:
        await eventually(lambda: bool(sending(workspace)), timeout=30, what="the send's record before its wait")
    finally:
        os.kill(sender.pid, signal.SIGKILL)  # during the wait: the task still holds
        sender.wait(timeout=10)
    (record,) = pending.read(workspace).records
    assert record.state == "sending" and record.task_id and record.message == "hold s1"

    out = tmp_path / "delivered.jsonl"
    spawn(workspace.root, out)  # the restarted worker adopts the orphaned record
    await eventually(lambda: "SubscribeToTask" in agent.methods, timeout=30, what="the worker to follow the task")
    agent.release("s1")
    await eventually(lambda: len(delivered(out)) >= 1, timeout=30, what="the result in the chat")
    await eventually(lambda: pending.read(workspace).records == [], what="pending.json to empty")
    (only,) = delivered(out)
    assert only["watchId"] == record.watch_id and only["target"] == "chat1" and "released s1" in only["text"]
