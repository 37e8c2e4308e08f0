"""The workspace files under real OS processes: concurrent writers lose nothing, a killed writer tears nothing."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from a2aconsole.core.agents import dump_agents
from a2aconsole.core.workspace import Workspace
from tests.support.workspace_writer import churn_entries

ROOT = Path(__file__).resolve().parents[2]
DEADLINE_SECONDS = 60


def writer(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.support.workspace_writer", *args],
        cwd=ROOT,
        stdin=subprocess.PIPE if args[0] == "append" else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )


def load_if_present(path: Path) -> list | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    return json.loads(data)  # a torn or half-written file fails here


def test_two_processes_lose_no_update_and_the_files_stay_valid(workspace: Workspace) -> None:
    n = 60
    procs = [writer("append", str(workspace.root), who, str(n)) for who in ("a", "b")]
    for p in procs:
        assert p.stdout.readline() == "ready\n"
    for p in procs:  # both start together, so their saves interleave
        p.stdin.write("go\n")
        p.stdin.close()
    reads = 0
    deadline = time.monotonic() + DEADLINE_SECONDS
    while any(p.poll() is None for p in procs):
        assert time.monotonic() < deadline, "writers did not finish"
        load_if_present(workspace.pending_path)
        load_if_present(workspace.agents_path)
        reads += 1
    assert [p.returncode for p in procs] == [0, 0]
    assert reads > 0
    for p in procs:
        p.stdout.close()

    pending = [r.watch_id for r in workspace.read_pending().records]
    agents = workspace.read_agents()
    assert agents.problems == [] and agents.parse_error is None
    for names in (pending, [e.name for e in agents.entries]):
        assert len(names) == 2 * n
        for who in ("a", "b"):
            assert [x for x in names if x.startswith(f"{who}-")] == [f"{who}-{i}" for i in range(n)]
    switches = sum(1 for x, y in zip(pending, pending[1:], strict=False) if x[0] != y[0])
    assert switches >= 2, "the writers did not run concurrently"
    assert not list(workspace.a2a_dir.glob("*.tmp"))


def test_a_writer_killed_mid_save_leaves_old_or_new_content(workspace: Workspace) -> None:
    padding = 300_000  # a big file makes the write window wide, so kills land inside saves
    rng = random.Random(20261202)
    last_counter = -1
    for _ in range(30):
        proc = writer("churn", str(workspace.root), str(padding))
        try:
            assert proc.stdout.readline() == "ready\n"
            # Once it is saving in its loop, let a random number of look-ups pass, then kill it wherever it is.
            inode = workspace.agents_path.stat().st_ino
            deadline = time.monotonic() + DEADLINE_SECONDS
            while workspace.agents_path.stat().st_ino == inode:
                assert time.monotonic() < deadline, "writer made no progress"
            for _ in range(rng.randrange(1, 2000)):
                workspace.agents_path.stat()
            proc.send_signal(signal.SIGKILL)
        finally:
            proc.kill()
            proc.wait()
            proc.stdout.close()
        assert proc.returncode == -signal.SIGKILL

        raw = workspace.agents_path.read_bytes()
        data = json.loads(raw)
        counter = int(data[0]["description"].split(":", 1)[0])
        assert raw == dump_agents(churn_entries(counter, padding)), "file is not exactly one saved content"
        assert counter >= 1
        last_counter = counter
        assert workspace.read_agents().get("churn") is not None

    # The next save under the lock (released by the kernel at the kill) works and sweeps the leftovers.
    workspace.save_agents(churn_entries(last_counter + 1, 10), workspace.read_agents().version)
    assert sorted(os.listdir(workspace.a2a_dir)) == [".lock", "agents.json"]


@pytest.mark.parametrize(
    ("phase", "survives"),
    [("mid-write", "old"), ("before-fsync", "old"), ("before-replace", "old"), ("after-replace", "new")],
)
def test_a_writer_killed_at_each_instant_of_a_save(workspace: Workspace, phase: str, survives: str) -> None:
    """The same, at chosen instants: the temp file may be left (torn), the real file never is."""
    old = workspace.save_agents(churn_entries(0, 1000), None)
    proc = writer("crash", str(workspace.root), phase)
    proc.communicate(timeout=DEADLINE_SECONDS)
    assert proc.returncode == -signal.SIGKILL
    raw = workspace.agents_path.read_bytes()
    expected = churn_entries(0 if survives == "old" else 1, 1000)
    assert raw == dump_agents(expected)
    temps = list(workspace.a2a_dir.glob(".agents.json.*.tmp"))
    assert len(temps) == (1 if survives == "old" else 0)
    af = workspace.read_agents()
    assert af.problems == [] and af.parse_error is None
    assert (af.version == old) is (survives == "old")
    workspace.save_agents(churn_entries(2, 10), af.version)
    assert sorted(os.listdir(workspace.a2a_dir)) == [".lock", "agents.json"]
