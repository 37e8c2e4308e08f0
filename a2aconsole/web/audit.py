"""The audit log: who changed agents, API tokens or the owner's password, and when.

Record first, audit second: a view calls `record` only after the change is durable (the file written, the
token saved). An entry that cannot be written is logged and dropped; it never undoes or fails the change.
Entries name agents and tokens by name and label; a key, token or password never reaches one.
"""

from __future__ import annotations

import ipaddress
import json
import logging
from typing import Any

from django.db import transaction
from django.http import HttpRequest

from a2aconsole.core.files import mask_url
from a2aconsole.web.models import AuditEntry

log = logging.getLogger(__name__)

AFTER_CONFLICT = "saved over a change made since the form was opened"
# how an agents.json conflict page was resolved
FILE_KEPT_YOURS = "after a conflict: kept yours over a change made since the editor was opened"
FILE_MERGED = "after a conflict: saved a merge with a change made since the editor was opened"
FILE_KEPT = "after a conflict: kept the file as it was; the other change was not saved"


def record(
    request: HttpRequest | None, action: str, subject: str = "", *, target: str = "", detail: str = "", user: Any = None
) -> AuditEntry | None:
    """Write one entry for what `request`'s user just did; None (and an ERROR log line) when it cannot be."""
    user = user if user is not None else getattr(request, "user", None)
    known = user is not None and user.is_authenticated
    username = user.get_username() if known else ""
    try:
        with transaction.atomic():  # a failed insert must not spoil an enclosing transaction
            return AuditEntry.objects.create(
                user=user if known else None,
                username=username,
                address=_address(request),
                action=action,
                subject=subject[:200],
                target=target[:64],
                detail=detail[:1000],
            )
    except Exception as e:
        log.error("audit entry not written (the change itself stands): %s %r by %r: %s", action, subject, username, e)
        return None


def record_login(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    """`user_logged_in` receiver."""
    record(request, "login", user=user)


def _address(request: HttpRequest | None) -> str | None:
    """The client's address as the login throttle sees it (behind a trusted proxy: the forwarded one)."""
    from axes.helpers import get_client_ip_address

    addr = (get_client_ip_address(request) or "") if request is not None else ""
    try:
        return str(ipaddress.ip_address(addr))
    except ValueError:
        return None


def entry_changes(old: dict[str, Any], new: dict[str, Any]) -> str:
    """What an edit changed in one agents.json entry, in words, without the key's or URL's hidden parts."""
    changes = []
    if old.get("name") != new.get("name"):
        changes.append(f"renamed from {old.get('name')}")
    if old.get("url") != new.get("url"):
        changes.append(f"URL now {mask_url(str(new.get('url', '')))}")
    if old.get("key") != new.get("key"):
        changes.append("key removed" if not new.get("key") else "key replaced" if old.get("key") else "key set")
    if old.get("description") != new.get("description"):
        changes.append("description changed")
    others = sorted(k for k in {*old, *new} - {"name", "url", "key", "description"} if old.get(k) != new.get(k))
    if others:
        changes.append("changed " + ", ".join(others))
    return "; ".join(changes) or "nothing changed"


def entry_summary(entry: dict[str, Any]) -> str:
    """A new entry in words: its masked URL and whether it has a key."""
    return f"URL {mask_url(str(entry.get('url', '')))}; {'key set' if entry.get('key') else 'no key'}"


def file_changes(old_text: str | None, new_text: str) -> str:
    """What a save of the whole agents.json changed, by agent name."""
    old, new = _by_name(old_text), _by_name(new_text)
    if old is None:
        return "replaced a file that could not be read"
    if new is None:
        return "saved a file that is not a list of agents"
    added = sorted(new.keys() - old.keys())
    removed = sorted(old.keys() - new.keys())
    changed = sorted(n for n in old.keys() & new.keys() if old[n] != new[n])
    parts = [
        f"{what} {', '.join(names)}"
        for what, names in (("added", added), ("removed", removed), ("changed", changed))
        if names
    ]
    return "; ".join(parts) or "no agent changed"


def _by_name(text: str | None) -> dict[str, Any] | None:
    try:
        data = json.loads(text or "[]")
    except ValueError:
        return None
    if not isinstance(data, list):
        return None
    return {str(e.get("name")): e for e in data if isinstance(e, dict)}
