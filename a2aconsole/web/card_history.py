"""The card history: each agent's card as last fetched, and what changed from one version to the next.

agents.json stays the truth for which agents exist; this only remembers what each one published, so the
agents list can show a card without fetching it on every load and a refetch can say what changed (skills
added or removed, capabilities, version). Bounded: the newest KEEP versions per agent, each card at most
MAX_CARD_BYTES once scrubbed (a bigger one keeps its summary only). Cards are stored scrubbed: every entry's
key and URL secrets masked wherever the agent echoed them, every URL as scheme, host, port and path.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from django.db import transaction
from django.db.models import Max

from a2aconsole.core.files import AgentEntry, is_http_url, mask_url
from a2aconsole.core.scrubber import Scrubber
from a2aconsole.web.models import CardSnapshot

KEEP = 20
MAX_CARD_BYTES = 64 * 1024
MAX_ERROR = 500
CAPABILITIES = {
    "streaming": "streaming",
    "pushNotifications": "push notifications",
    "extendedAgentCard": "extended card",
}


def secrets(entries: Iterable[AgentEntry]) -> frozenset[str]:
    """What a card must never show: every entry's key and the hidden parts of its URL (user, password, query
    values), since an agent may echo any of them, and one agent's card could name another's."""
    found: set[str] = set()
    for e in entries:
        if e.key:
            found.add(e.key)
        try:
            p = urlsplit(e.url)
        except ValueError:
            continue
        found.update(x for x in (p.username, p.password, p.query, p.fragment) if x)
        found.update(v for _, v in parse_qsl(p.query) if v)
    return frozenset(found)


def scrubbed(card: dict[str, Any], hidden: frozenset[str]) -> dict[str, Any]:
    """The card with every secret masked (the core's scrubber: `***`) and every web address as scheme, host,
    port and path."""
    scrub = Scrubber(hidden)

    def clean(v: Any) -> Any:
        if isinstance(v, dict):
            return {clean(k): clean(x) for k, x in v.items()}
        if isinstance(v, list):
            return [clean(x) for x in v]
        if isinstance(v, str):
            v = scrub.text(v)
            if is_http_url(v):
                v = mask_url(v)
        return v

    return clean(card)


def _canonical(card: dict[str, Any]) -> str:
    return json.dumps(card, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _summary(card: dict[str, Any]) -> dict[str, Any]:
    """What a card too big to keep is remembered by: enough to tell the changes the list shows."""
    small: dict[str, Any] = {
        "name": str(card.get("name", ""))[:200],
        "description": str(card.get("description", ""))[:2000],
        "version": str(card.get("version", ""))[:100],
        "capabilities": {k: bool((card.get("capabilities") or {}).get(k)) for k in CAPABILITIES},
        "skills": [],
    }
    size = len(_canonical(small))
    for s in card.get("skills") or []:
        if not isinstance(s, dict):
            continue
        skill = {"id": str(s.get("id", ""))[:200], "name": str(s.get("name", ""))[:200]}
        size += len(_canonical(skill)) + 1
        if size > MAX_CARD_BYTES:
            break
        small["skills"].append(skill)
    return small


def _skills(card: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {str(s.get("id", "")): s for s in card.get("skills") or [] if isinstance(s, dict)}


def changes(old: dict[str, Any] | None, new: dict[str, Any], old_trimmed: bool = False) -> dict[str, Any]:
    """What changed from `old` to `new`: skills added, removed or changed, capabilities, version, and the
    names of other top-level fields that differ. {} for a first card or the same card."""
    if not old:
        return {}
    out: dict[str, Any] = {}
    before, after = _skills(old), _skills(new)
    named = [
        ("skills_added", after, after.keys() - before.keys()),
        ("skills_removed", before, before.keys() - after.keys()),
    ]
    for what, side, ids in named:
        if ids:
            out[what] = [{"id": i, "name": str(side[i].get("name") or i)} for i in sorted(ids)]
    if not old_trimmed:  # a trimmed card kept only ids and names: a changed description could not be told
        changed = sorted(i for i in before.keys() & after.keys() if before[i] != after[i])
        if changed:
            out["skills_changed"] = [{"id": i, "name": str(after[i].get("name") or i)} for i in changed]
    caps_old, caps_new = old.get("capabilities") or {}, new.get("capabilities") or {}
    caps = [
        {"name": label, "old": bool(caps_old.get(k)), "new": bool(caps_new.get(k))}
        for k, label in CAPABILITIES.items()
        if bool(caps_old.get(k)) != bool(caps_new.get(k))
    ]
    if caps:
        out["capabilities"] = caps
    if old.get("version", "") != new.get("version", ""):
        out["version"] = {"old": str(old.get("version", "")), "new": str(new.get("version", ""))}
    if not old_trimmed:
        skip = {"skills", "capabilities", "version"}
        others = sorted(k for k in {*old, *new} - skip if old.get(k) != new.get(k))
        if others:
            out["fields"] = others
    return out


def latest(workspace: str, names: list[str]) -> dict[str, CardSnapshot]:
    """The newest snapshot of each named agent (two queries, whatever the number of agents)."""
    ids = (
        CardSnapshot.objects.filter(workspace=workspace, agent__in=names)
        .values("agent")
        .annotate(newest=Max("id"))
        .values_list("newest", flat=True)
    )
    return {s.agent: s for s in CardSnapshot.objects.filter(id__in=list(ids))}


def history(workspace: str, agent: str) -> list[CardSnapshot]:
    """An agent's kept versions, the newest first."""
    return list(CardSnapshot.objects.filter(workspace=workspace, agent=agent).order_by("-id")[:KEEP])


def record(
    workspace: str,
    entry: AgentEntry,
    card: dict[str, Any] | None,
    error: str,
    now: datetime,
    *,
    hidden: frozenset[str] = frozenset(),
    extended: bool = False,
) -> CardSnapshot:
    """Remember one fetch: the card (a JSON dict, scrubbed here of `hidden` and of the entry's own secrets)
    or why it could not be read."""
    with transaction.atomic():
        rows = CardSnapshot.objects.select_for_update().filter(workspace=workspace, agent=entry.name)
        last = rows.order_by("-id").first()
        if card is None:
            error = error[:MAX_ERROR] or "the card could not be read"
            if last is None:
                return CardSnapshot.objects.create(workspace=workspace, agent=entry.name, checked_at=now, error=error)
            last.checked_at, last.error = now, error
            last.save(update_fields=["checked_at", "error"])
            return last
        clean = scrubbed(card, hidden | secrets([entry]))
        text = _canonical(clean)
        digest = hashlib.sha256(text.encode()).hexdigest()
        trimmed = len(text.encode()) > MAX_CARD_BYTES
        kept = _summary(clean) if trimmed else clean
        if last is not None and last.digest in (digest, ""):
            if not last.digest:  # the first card of an agent that had never answered
                last.card, last.digest, last.trimmed, last.first_fetched_at = kept, digest, trimmed, now
            last.fetched_at, last.checked_at, last.error, last.extended = now, now, "", extended
            last.save()
            return last
        snap = CardSnapshot.objects.create(
            workspace=workspace,
            agent=entry.name,
            card=kept,
            digest=digest,
            trimmed=trimmed,
            extended=extended,
            changes=changes(last.card if last else None, clean, old_trimmed=bool(last and last.trimmed)),
            first_fetched_at=now,
            fetched_at=now,
            checked_at=now,
        )
        stale = list(rows.order_by("-id").values_list("id", flat=True)[KEEP:])
        if stale:
            CardSnapshot.objects.filter(id__in=stale).delete()
        return snap


def rename(workspace: str, old: str, new: str) -> None:
    """An agent renamed in the console keeps its history (any left under the new name is dropped first)."""
    with transaction.atomic():
        CardSnapshot.objects.filter(workspace=workspace, agent=new).delete()
        CardSnapshot.objects.filter(workspace=workspace, agent=old).update(agent=new)


def forget(workspace: str, name: str) -> None:
    """An agent deleted in the console takes its history along."""
    CardSnapshot.objects.filter(workspace=workspace, agent=name).delete()
