"""A chat target as one call uses it: resolved once by the caller, then passed to the tool as a value.

The console's send form, the JSON API, the CLI and the watch worker each resolve the target in their own
context (an async read where they are async) and hand the tool this value: the tool reads no database and
calls back nobody. `hops` is the hop count of the target's last inbound message (the API's `hops`, an
`a2a.inbound` message): every outgoing message carries `hops + 1` (`volcanic.hops`), so a chain of agents
calling each other can be stopped by its length.
"""

from __future__ import annotations

from dataclasses import dataclass

from a2aconsole.core.files import Workspace

CONSOLE_TARGET = "console"  # the console's own chat, over settings.WORKSPACE_DIR
MAX_HOPS = 1000  # the largest inbound hop count a host may report


@dataclass(frozen=True)
class ChatTarget:
    """One chat target: its id, its workspace, its inbound hop count and its delivery backend."""

    id: str
    workspace: Workspace
    hops: int = 0
    backend: str = "web"
