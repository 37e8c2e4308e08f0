"""The workspace file layer: agents.json parsing and validation, atomic saves, versions, unknown fields, keys."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path

import pytest

from a2aconsole.core import pending
from a2aconsole.core.errors import ConflictError, FileFormatError, ValidationError
from a2aconsole.core.files import atomic as files
from a2aconsole.core.files.agents import AgentEntry
from a2aconsole.core.files.atomic import MISSING_VERSION, atomic_write, lock_for, version_of
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.records import WatchRecord
from tests.support.locks import held_by_a_thread

KEY = "sk-very-secret-key-123"


def write(ws: Workspace, text: str) -> None:
    ws.agents_path.parent.mkdir(parents=True, exist_ok=True)
    ws.agents_path.write_text(text)


def record(watch_id: str = "w1", **extra: object) -> WatchRecord:
    return WatchRecord(watch_id=watch_id, target="console", agent="travel", task_id="t1", push_token="tok", **extra)


# reading agents.json


def test_paths_are_the_specs(workspace: Workspace) -> None:
    assert workspace.agents_path == workspace.root / ".volcanic" / "a2a" / "agents.json"
    assert pending.file_path(workspace) == workspace.root / ".volcanic" / "a2a" / "pending.json"
    assert workspace.inbox_dir == workspace.root / "inbox" / "a2a"


def test_missing_file_means_no_agents(workspace: Workspace) -> None:
    af = workspace.read_agents()
    assert (af.entries, af.problems, af.parse_error, af.exists) == ([], [], None, False)
    assert af.version == MISSING_VERSION


def test_valid_file_reads_entries(workspace: Workspace) -> None:
    write(
        workspace, json.dumps([{"name": "travel", "url": "https://t.example/a2a", "key": KEY, "description": "Trips"}])
    )
    af = workspace.read_agents()
    assert af.problems == [] and af.parse_error is None
    travel = af.get("travel")
    assert travel is not None and travel.key == KEY and travel.description == "Trips"
    assert travel.card_url == "https://t.example/a2a/.well-known/agent-card.json"
    assert af.get("nobody") is None


def test_reads_are_fresh_every_time(workspace: Workspace) -> None:
    write(workspace, '[{"name": "a", "url": "http://a.example"}]')
    assert [e.name for e in workspace.read_agents().entries] == ["a"]
    write(workspace, '[{"name": "b", "url": "http://b.example"}]')
    assert [e.name for e in workspace.read_agents().entries] == ["b"]


def test_malformed_file_names_the_file_and_position(workspace: Workspace) -> None:
    write(workspace, '[\n  {"name": "a", "url": "http://a.example"},\n  {"name": \n]')
    af = workspace.read_agents()
    assert af.entries == [] and af.problems == []
    assert str(workspace.agents_path) in af.parse_error
    assert "line 4 column 1" in af.parse_error


def test_not_utf8_is_a_parse_error(workspace: Workspace) -> None:
    workspace.agents_path.parent.mkdir(parents=True)
    workspace.agents_path.write_bytes(b'[{"name": "\xff"}]')
    af = workspace.read_agents()
    assert af.entries == [] and "not valid UTF-8 at byte 11" in af.parse_error


def test_not_an_array(workspace: Workspace) -> None:
    write(workspace, '{"name": "a"}')
    af = workspace.read_agents()
    assert af.entries == [] and af.problems == [f"{workspace.agents_path}: expected a JSON array of agents, got dict"]


def test_names_and_urls_with_hidden_whitespace_are_refused(workspace: Workspace) -> None:
    entries = [{"name": "a\n", "url": "https://a.example"}, {"name": "b", "url": "https://b .example"}]
    write(workspace, json.dumps(entries))
    af = workspace.read_agents()
    assert af.entries == [] and len(af.problems) == 2
    assert "name must be" in af.problems[0] and "url must be" in af.problems[1]


def test_each_problem_names_the_entry_and_field(workspace: Workspace) -> None:
    write(
        workspace,
        json.dumps(
            [
                {"name": "good", "url": "https://good.example"},
                {"name": "Bad Name", "url": "https://x.example"},
                {"name": "nourl"},
                {"name": "relative", "url": "/a2a"},
                {"name": "ftp", "url": "ftp://x.example"},
                {"name": "good", "url": "https://again.example"},
                {"name": "typed", "url": "https://t.example", "key": 5, "description": ["x"]},
                "just a string",
                {"url": "https://anon.example"},
                {"name": "x" * 41, "url": "https://long.example"},
            ]
        ),
    )
    af = workspace.read_agents()
    f = str(workspace.agents_path)
    assert [e.name for e in af.entries] == ["good"]
    assert af.problems == [
        f'{f} entry 2 ("Bad Name"): name must be 1-40 characters of a-z, 0-9 and -',
        f'{f} entry 3 ("nourl"): url must be an absolute http(s) URL',
        f'{f} entry 4 ("relative"): url must be an absolute http(s) URL',
        f'{f} entry 5 ("ftp"): url must be an absolute http(s) URL',
        f'{f} entry 6 ("good"): name is already used by entry 1',
        f'{f} entry 7 ("typed"): key must be a string',
        f'{f} entry 7 ("typed"): description must be a string',
        f"{f} entry 8: expected an object with name and url",
        f"{f} entry 9: name must be 1-40 characters of a-z, 0-9 and -",
        f'{f} entry 10 ("{"x" * 41}"): name must be 1-40 characters of a-z, 0-9 and -',
    ]


def test_problems_never_show_a_key(workspace: Workspace) -> None:
    write(workspace, json.dumps([{"name": "a", "url": f"https://user:{KEY}@a.example/?key={KEY}", "key": [KEY]}]))
    af = workspace.read_agents()
    assert af.problems and KEY not in "".join(af.problems)
    assert KEY not in repr(af)


# saving agents.json


def test_save_writes_and_returns_the_new_version(workspace: Workspace) -> None:
    version = workspace.save_agents([AgentEntry("a", "https://a.example")], MISSING_VERSION)
    data = workspace.agents_path.read_bytes()
    assert json.loads(data) == [{"name": "a", "url": "https://a.example"}]
    assert version == version_of(data) == workspace.read_agents().version


def test_save_with_stale_version_is_refused_and_clobbers_nothing(workspace: Workspace) -> None:
    first = workspace.save_agents([AgentEntry("a", "https://a.example")], MISSING_VERSION)
    workspace.save_agents([AgentEntry("b", "https://b.example", key=KEY)], first)
    current = workspace.agents_path.read_bytes()
    with pytest.raises(ConflictError) as e:
        workspace.save_agents([AgentEntry("c", "https://c.example")], first)
    assert workspace.agents_path.read_bytes() == current
    assert e.value.current_text == current.decode()
    assert e.value.current_version == version_of(current)
    assert str(workspace.agents_path) in str(e.value) and KEY not in str(e.value)


def test_creating_over_a_file_that_appeared_is_a_conflict(workspace: Workspace) -> None:
    write(workspace, "[]")
    with pytest.raises(ConflictError) as e:
        workspace.save_agents([], MISSING_VERSION)
    assert e.value.current_text == "[]"


def test_save_text_conflict_and_validation(workspace: Workspace) -> None:
    v = workspace.save_agents_text('[ {"name": "a", "url": "https://a.example"} ]', MISSING_VERSION)
    assert workspace.agents_path.read_text() == '[ {"name": "a", "url": "https://a.example"} ]'
    with pytest.raises(ValidationError) as e:
        workspace.save_agents_text('[{"name": "a"', v)
    assert "not valid JSON" in e.value.problems[0]
    with pytest.raises(ValidationError):
        workspace.save_agents_text('[{"name": "A", "url": "https://a.example"}]', v)
    with pytest.raises(ConflictError):
        workspace.save_agents_text("[]", MISSING_VERSION)
    assert workspace.read_agents().version == v


def test_invalid_entries_are_not_saved_and_the_error_hides_the_key(workspace: Workspace) -> None:
    with pytest.raises(ValidationError) as e:
        workspace.save_agents([{"name": "ok", "url": "nope", "key": KEY}], None)
    assert e.value.problems == ['agents.json entry 1 ("ok"): url must be an absolute http(s) URL']
    assert KEY not in str(e.value)
    assert not workspace.agents_path.exists()


async def test_async_save_checks_the_version_too(workspace: Workspace) -> None:
    v = await workspace.asave_agents([AgentEntry("a", "https://a.example")], MISSING_VERSION)
    with pytest.raises(ConflictError):
        await workspace.asave_agents([], MISSING_VERSION)
    assert await workspace.asave_agents([], v) == version_of(b"[]\n")


def test_unknown_agent_fields_survive_a_rewrite(workspace: Workspace) -> None:
    write(
        workspace,
        json.dumps([{"name": "a", "url": "https://a.example", "key": KEY, "tags": ["x"], "extra": {"n": 1}}]),
    )
    af = workspace.read_agents()
    entry = af.entries[0]
    entry.description = "now described"
    workspace.save_agents([*af.entries, AgentEntry("b", "https://b.example")], af.version)
    saved = json.loads(workspace.agents_path.read_text())
    assert saved[0] == {
        "name": "a",
        "url": "https://a.example",
        "key": KEY,
        "description": "now described",
        "tags": ["x"],
        "extra": {"n": 1},
    }
    assert saved[1] == {"name": "b", "url": "https://b.example"}


def test_agent_repr_hides_key_and_url_secrets() -> None:
    e = AgentEntry("a", f"https://u:{KEY}@a.example:8443/a2a?token={KEY}", key=KEY)
    assert KEY not in repr(e) and KEY not in str(e)
    assert e.masked_url == "https://a.example:8443/a2a"


# pending.json


async def test_pending_unknown_fields_round_trip(workspace: Workspace) -> None:
    raw = [
        {
            "watchId": "w1",
            "target": 42,
            "agent": "travel",
            "taskId": "t1",
            "contextId": "c1",
            "pushToken": "tok",
            "startedAt": "2026-01-01T00:00:00Z",
            "source": "push",
            "state": "working",
            "message": {"note": "kept"},
        },
        {"watchId": "w2", "target": "console", "agent": "travel", "taskId": "t2", "future": True},
    ]
    pending.file_path(workspace).parent.mkdir(parents=True)
    pending.file_path(workspace).write_text(json.dumps(raw))
    async with pending.transaction(workspace) as tx:
        assert tx.find("w1").target == "42"
        tx.remove("w2")
        tx.edit("w1").undelivered = "the result"
    saved = json.loads(pending.file_path(workspace).read_text())
    assert saved == [{**raw[0], "target": "42", "undelivered": "the result"}]


def test_pending_tx_writes_only_on_change(workspace: Workspace) -> None:
    with pending.transaction_sync(workspace) as tx:
        assert tx.records == ()
    assert not pending.file_path(workspace).exists()
    with pending.transaction_sync(workspace) as tx:
        tx.add(record())
    assert [r.watch_id for r in pending.read(workspace).records] == ["w1"]


def test_pending_tx_raising_writes_nothing(workspace: Workspace) -> None:
    with pending.transaction_sync(workspace) as tx:
        tx.add(record("w1"))
    before = pending.file_path(workspace).read_bytes()
    with pytest.raises(RuntimeError), pending.transaction_sync(workspace) as tx:
        tx.add(record("w2"))
        raise RuntimeError("abort")
    assert pending.file_path(workspace).read_bytes() == before


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[{"watchId": ', "is not valid JSON: Expecting value at line 1 column 14"),
        ('{"watchId": "w"}', "expected a JSON array of watch records"),
        ('[{"watchId": "w", "target": "t"}]', "record 1: missing agent, taskId"),
    ],
)
def test_malformed_pending_is_reported_and_left_alone(workspace: Workspace, text: str, message: str) -> None:
    pending.file_path(workspace).parent.mkdir(parents=True)
    pending.file_path(workspace).write_text(text)
    pf = pending.read(workspace)
    assert pf.records == [] and message in pf.parse_error and str(pending.file_path(workspace)) in pf.parse_error
    with pytest.raises(FileFormatError) as e, pending.transaction_sync(workspace) as tx:
        tx.add(record())
    assert message in str(e.value) and str(e.value).count(str(pending.file_path(workspace))) == 1
    assert pending.file_path(workspace).read_text() == text


def test_watch_record_repr_hides_the_push_token() -> None:
    r = record(undelivered="secret result")
    assert "tok" not in repr(r) and "secret result" not in repr(r)


# the atomic write itself


def test_atomic_write_replaces_and_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "f.json"
    atomic_write(target, b"one")
    atomic_write(target, b"two")
    assert target.read_bytes() == b"two"
    assert sorted(p.name for p in target.parent.iterdir()) == ["f.json"]


def test_atomic_write_keeps_the_mode_and_creates_private_files(tmp_path: Path) -> None:
    new = tmp_path / "new.json"
    atomic_write(new, b"[]")
    assert stat.S_IMODE(new.stat().st_mode) == 0o600
    shared = tmp_path / "shared.json"
    shared.write_bytes(b"old")
    shared.chmod(0o644)
    atomic_write(shared, b"new")
    assert stat.S_IMODE(shared.stat().st_mode) == 0o644


def test_atomic_write_failure_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "f.json"
    atomic_write(target, b"old")

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(files.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        atomic_write(target, b"new")
    monkeypatch.undo()
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["f.json"]


async def test_async_lock_is_taken_at_once_when_free_and_waited_for_when_held(tmp_path: Path) -> None:
    """A free lock needs no thread; a held one is waited for in a thread, the loop running on meanwhile."""
    lock = lock_for(tmp_path / ".lock")
    async with lock.ahold():
        pass
    async with held_by_a_thread(lock) as release:
        got = asyncio.Event()

        async def take() -> None:
            async with lock.ahold():
                got.set()

        taking = asyncio.ensure_future(take())
        for _ in range(20):  # the loop turns while the holder keeps the lock
            await asyncio.sleep(0)
        assert not got.is_set() and not taking.done()
        release()
        await asyncio.wait_for(taking, 10)
        assert got.is_set()
