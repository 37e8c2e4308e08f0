"""The `/a2a` status listing (the spec's Telegram command): remote agents and active watches, as text.

Agents show name, masked URL (scheme, host, port, path) and whether a key is set, never the key.
Watches show agent, task, source and age; results kept for later delivery are listed apart.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from a2aconsole.core import pending
from a2aconsole.core.files import Workspace
from a2aconsole.core.pending import WatchRecord


def age(started_at: str, now: datetime) -> str:
    """`started_at` (ISO 8601) as a short age like `45s`, `12m`, `3h 5m`, `2d 4h`; `?` when unreadable."""
    try:
        start = datetime.fromisoformat(started_at.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return "?"
    if start.tzinfo is None:
        start = start.replace(tzinfo=UTC)
    s = max(0, int((now - start).total_seconds()))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h {s % 3600 // 60}m"
    return f"{s // 86400}d {s % 86400 // 3600}h"


def status_report(
    workspace: Workspace,
    watches: Iterable[WatchRecord] | None = None,
    *,
    now: datetime | None = None,
    enabled: bool = True,
) -> str:
    """The listing. `watches` is the registry's snapshot when one runs, else `pending.json` is read."""
    now = now or datetime.now(UTC)
    lines = [f"A2A client: {'on' if enabled else 'off'}", f"Workspace: {workspace.root}"]

    agents = workspace.read_agents()
    lines.append(f"Agents ({len(agents.entries)}):")
    if agents.parse_error:
        lines.append(f"  {agents.parse_error}")
    for e in agents.entries:
        key = "key: set (hidden)" if e.key else "no key"
        lines.append(f"  {e.name}  {e.masked_url}  {key}")
    lines.extend(f"  problem: {p}" for p in agents.problems)
    if not agents.entries and not agents.parse_error and not agents.problems:
        lines.append("  (none)")

    if watches is None:
        pending_file = pending.read(workspace)
        if pending_file.parse_error:
            lines.append(f"Watches: {pending_file.parse_error}")
            return "\n".join(lines)
        watches = pending_file.records
    records = list(watches)
    active = [r for r in records if r.undelivered is None]
    kept = [r for r in records if r.undelivered is not None]
    lines.append(f"Watches ({len(active)}):")
    for r in active:
        lines.append(
            f"  {r.agent}  task {r.task_id}  source {r.source}  age {age(r.started_at, now)}  target {r.target}"
        )
    if not active:
        lines.append("  (none)")
    if kept:
        lines.append(f"Results waiting for delivery ({len(kept)}):")
        lines.extend(f"  {r.agent}  task {r.task_id}  target {r.target}" for r in kept)
    return "\n".join(lines)
