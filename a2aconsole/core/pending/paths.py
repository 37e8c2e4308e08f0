"""Where a workspace's watch records live: `pending.json` and the journal of sends' records beside it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from a2aconsole.core.files import Workspace

FILE_NAME = "pending.json"
JOURNAL_NAME = "pending.journal"


def file_path(ws: Workspace) -> Path:
    return ws.a2a_dir / FILE_NAME


def journal_path(ws: Workspace) -> Path:
    return ws.a2a_dir / JOURNAL_NAME
