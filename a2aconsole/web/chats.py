"""Chat targets resolved once into the core's value (`core.chat.ChatTarget`) that the tool and the watches take.

Each caller resolves in its own context, once per call: `aresolve` where it is async (the console's views, the
page sockets, the JSON API), `resolve` where it is sync (the CLI, a thread). The tool then reads no database:
the workspace and the inbound hops come with the value. The `console` target's workspace is always
settings.WORKSPACE_DIR (`A2ACONSOLE_WORKSPACE`), whatever its row says, and it is known before its row exists;
any other target must have a row and be enabled.
"""

from __future__ import annotations

from django.conf import settings

from a2aconsole.core.chat import CONSOLE_TARGET, ChatTarget
from a2aconsole.core.files import Workspace
from a2aconsole.web.models import ChatTarget as ChatTargetRow


def value_of(row: ChatTargetRow | None, target_id: str, *, hops: int | None = None) -> ChatTarget | None:
    """The target as a value (None: unknown or disabled). `hops` given (the host's count of this call) wins over
    the count kept on the row."""
    kept = int(row.inbound_hops) if row is not None else 0
    hops = kept if hops is None else hops
    if target_id == CONSOLE_TARGET:
        backend = row.backend if row is not None else "web"
        return ChatTarget(CONSOLE_TARGET, Workspace(settings.WORKSPACE_DIR), hops, backend)
    if row is None or not row.enabled or not row.workspace:
        return None
    return ChatTarget(row.id, Workspace(row.workspace), hops, row.backend)


def unknown(target_id: str) -> str:
    """What a caller answers for a target that did not resolve."""
    return f"unknown chat target {target_id!r}, or it is disabled"


def resolve(target_id: str) -> ChatTarget | None:
    """The target by id, read now (sync: the CLI, or a thread)."""
    return value_of(ChatTargetRow.objects.filter(pk=target_id).first(), target_id)


async def aresolve(target_id: str) -> ChatTarget | None:
    """The target by id, read now with the async ORM (from the event loop)."""
    return value_of(await ChatTargetRow.objects.filter(pk=target_id).afirst(), target_id)


def enabled_workspaces() -> list[Workspace]:
    """The console's workspace and every enabled chat target's, once each (sync: call from a thread)."""
    seen: dict[Workspace, None] = {Workspace(settings.WORKSPACE_DIR): None}
    for path in ChatTargetRow.objects.filter(enabled=True).values_list("workspace", flat=True):
        if path:
            seen.setdefault(Workspace(path), None)
    return list(seen)
