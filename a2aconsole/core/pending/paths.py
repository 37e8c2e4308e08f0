"""Where a workspace's watch records live: `pending.json` and the journal of sends' records beside it."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from a2aconsole.core.files import Workspace

FILE_NAME = "pending.json"
JOURNAL_NAME = "pending.journal"


# made once per workspace: every send reads both paths a few times, and each join is pathlib's Python code


@functools.lru_cache(maxsize=1024)
def file_path(ws: Workspace) -> Path:
    return ws.a2a_dir / FILE_NAME


@functools.lru_cache(maxsize=1024)
def journal_path(ws: Workspace) -> Path:
    return ws.a2a_dir / JOURNAL_NAME
