"""The pages read pending.json parsed once per version of the file: a view after another process's write, or after an
edit in place that keeps the file's size, shows the file as it is now."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from a2aconsole.core import pending
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.records import WatchRecord
from a2aconsole.web import pending_cache
from tests.support.console import create_owner

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def watches_line(html: str) -> str:
    m = re.search(r"(\d+) active:</p><ul>(.*?)</ul>", html, re.S)
    return f"{m.group(1)}: {re.sub(r'<[^>]+>', ' ', m.group(2)).split()}" if m else "none"


def test_dashboard_shows_another_process_write_and_an_edit_in_place(ws: Workspace, client) -> None:
    client.force_login(create_owner())
    with pending.transaction_sync(ws) as tx:
        tx.add(WatchRecord("w1", "console", "bot", "t1", source="poll"))
    assert watches_line(client.get("/").text) == "1: ['1', 'by', 'poll']"
    assert pending_cache.read_pending(ws) is pending_cache.read_pending(ws)  # parsed once while unchanged

    # another process (as `manage.py a2a send` or the worker) adds two watches under the file's lock
    writer = subprocess.run(
        [sys.executable, "-m", "tests.support.workspace_writer", "append", str(ws.root), "cli", "2"],
        cwd=ROOT,
        input="go\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert writer.returncode == 0, writer.stderr
    assert watches_line(client.get("/").text) == "3: ['3', 'by', 'poll']"

    # an editor changes a value in place: same inode, same size, only the mtime moves
    text = pending.file_path(ws).read_text()
    assert text.count('"poll"') == 3
    with open(pending.file_path(ws), "r+") as f:
        f.write(text.replace('"poll"', '"push"', 1))
    assert watches_line(client.get("/").text) == "3: ['2', 'by', 'poll', '1', 'by', 'push']"


def test_watch_table_shows_a_watch_written_since_the_last_view(ws: Workspace, client) -> None:
    client.force_login(create_owner())
    assert "No watches" in client.get("/watches/").text
    with pending.transaction_sync(ws) as tx:
        tx.add(WatchRecord("w1", "console", "bot", "task-new-1"))
    assert "task-new-1" in client.get("/watches/").text
    # a send's record is a line of the journal beside pending.json: the file itself is not rewritten
    with pending.transaction_sync(ws, durable=False) as tx:
        tx.add(WatchRecord("w2", "console", "bot", "task-sending-2", state="sending"))
    assert "task-sending-2" in client.get("/watches/").text
