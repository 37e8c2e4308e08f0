"""Where a workspace's watch records live: `pending.json` and the journal of sends' records beside it."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from a2aconsole.core.files import Workspace

FILE_NAME = "pending.json"
JOURNAL_NAME = "pending.journal"


# Joined once per workspace: a send's two transactions name both files nine times, and a pathlib join on
# Python 3.11 is a few hundred Python-level steps: afresh each time, about 240 K of the tool's ~1 M instructions
# per send (tests/bench/send_instructions.py). Bounded, as a process may see many workspaces (tests do).
@functools.lru_cache(maxsize=1024)
def file_path(ws: Workspace) -> Path:
    return ws.a2a_dir / FILE_NAME


@functools.lru_cache(maxsize=1024)
def journal_path(ws: Workspace) -> Path:
    return ws.a2a_dir / JOURNAL_NAME
