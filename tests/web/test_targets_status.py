"""The `/a2a` status listing: agents with masked URLs and hidden keys, watches with agent, task, source, age."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from a2aconsole.core import pending
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.records import WatchRecord
from a2aconsole.core.tool.status import status_report
from a2aconsole.web.models import ChatTarget

KEY = "sk-very-secret-key"


def fill(ws: Workspace, started: datetime) -> None:
    ws.save_agents(
        [
            {"name": "travel-bot", "url": "https://user:pw@travel.example:8443/a2a?token=abc#x", "key": KEY},
            {"name": "echo", "url": "http://127.0.0.1:9000/"},
        ],
        None,
    )
    with pending.transaction_sync(ws) as tx:
        tx.add(
            *[
                _record("w1", "travel-bot", "task-1", "push", started),
                _record("w2", "echo", "task-2", "poll", started - timedelta(hours=3)),
                _record("w3", "echo", "task-3", "poll", started, undelivered="kept text"),
            ]
        )


def _record(watch_id: str, agent: str, task: str, source: str, started: datetime, **more: object) -> WatchRecord:
    return WatchRecord(
        watch_id=watch_id,
        target="console",
        agent=agent,
        task_id=task,
        source=source,
        started_at=started.isoformat().replace("+00:00", "Z"),
        push_token="push-secret" if source == "push" else None,
        **more,  # type: ignore[arg-type]
    )


def test_status_report_lists_agents_and_watches(workspace: Workspace) -> None:
    now = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
    fill(workspace, now - timedelta(minutes=5))
    report = status_report(workspace, now=now)
    assert "travel-bot  https://travel.example:8443/a2a  key: set (hidden)" in report
    assert "echo  http://127.0.0.1:9000/  no key" in report
    assert "travel-bot  task task-1  source push  age 5m  target console" in report
    assert "echo  task task-2  source poll  age 3h 5m  target console" in report
    assert "Results waiting for delivery (1):\n  echo  task task-3" in report
    for secret in (KEY, "pw", "token=abc", "push-secret", "kept text"):
        assert secret not in report


@pytest.mark.django_db
def test_a2a_command_lists_agents_and_watches(workspace: Workspace) -> None:
    ChatTarget.objects.create(id="ops", name="Ops chat", workspace=str(workspace.root), backend="telegram")
    fill(workspace, datetime.now(UTC) - timedelta(minutes=2, seconds=5))
    out = io.StringIO()
    call_command("a2a_status", "--target", "ops", stdout=out)
    text = out.getvalue()
    assert text.startswith("Chat target: ops (Telegram)\nA2A client: on\n")
    assert "Agents (2):" in text and "Watches (2):" in text
    assert "travel-bot  https://travel.example:8443/a2a  key: set (hidden)" in text
    assert "travel-bot  task task-1  source push  age 2m  target console" in text
    assert KEY not in text and "token=abc" not in text and "push-secret" not in text
    assert json.loads(pending.file_path(workspace).read_text())[0]["pushToken"] == "push-secret"  # nothing rewritten


@pytest.mark.django_db
def test_a2a_command_unknown_target() -> None:
    with pytest.raises(CommandError, match="unknown chat target 'nope'"):
        call_command("a2a_status", "--target", "nope")
