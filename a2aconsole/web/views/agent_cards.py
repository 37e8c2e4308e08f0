"""The agents at a glance: the list with each card's summary, reachability and last change, the card refetch,
and one agent's page.

agents.json says which agents there are (read afresh on every page); what each card says comes from the card
history (`web/card_history.py`), so the list never waits for the agents. The list asks for the cards not
checked in the last STALE_AFTER once it is on screen (htmx, on load), and the owner can refetch one card or
all of them; the agent's own page fetches its card on every visit. Every fetch goes through the tool's
remote (the core), and is remembered with what changed since the version before.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.timesince import timesince
from django.views.decorators.http import require_POST

from a2aconsole.core.errors import A2AConsoleError
from a2aconsole.core.files import AgentEntry, AgentsFile, is_http_url, mask_url, origin
from a2aconsole.core.remote import BINDINGS, card_json
from a2aconsole.web import card_history, live, scope
from a2aconsole.web.models import CardSnapshot

log = logging.getLogger(__name__)

JUST_ADDED = "agent-just-added"  # the session's note, set by the add form, that the agent page says how it went
STALE_AFTER = timedelta(seconds=60)  # the list refetches cards checked longer ago than this
PARALLEL = 8  # cards fetched at once by one refresh


@dataclass
class Fetched:
    """One card fetch: the card as JSON (None when it could not be read) and why not, in the owner's words.
    `recorded` is False when the console itself could not ask (client off, no runtime): not the agent's fault."""

    card: dict[str, Any] | None
    error: str = ""
    extended: bool = False
    note: str = ""
    recorded: bool = True


async def fetch(entry: AgentEntry) -> Fetched:
    """The agent's card through the core's remote (the extended card when the key opens it)."""
    try:
        tool = scope.tool()
    except Exception as e:  # no runtime: say why, record nothing against the agent
        return Fetched(None, f"the console could not fetch cards: {type(e).__name__}", recorded=False)
    remote = tool.remote  # cards are read with the client off too: off stops send, status and cancel only
    try:
        card = await remote.fetch_card(entry)
    except A2AConsoleError as e:  # the core's errors are in words, URLs masked, keys never in them
        return Fetched(None, str(e))
    except Exception as e:
        log.info("card of %s not read: %s", entry.name, type(e).__name__)
        return Fetched(None, f'agent "{entry.name}": its card could not be read ({type(e).__name__})')
    extended, note = False, ""
    if entry.key and card.extended_card:
        try:
            conn = await remote.connect(entry, card)
            async with remote.clock.timeout(remote.card_timeout):
                card = await conn.extended_card()
            extended = True
        except Exception as e:  # the public card is still worth showing
            note = f"extended card not available: {e if isinstance(e, A2AConsoleError) else 'no answer in time'}"
    return Fetched(card_json(card), extended=extended, note=note)


async def fetch_and_record(
    ws_root: str, entry: AgentEntry, hidden: frozenset[str]
) -> tuple[Fetched, CardSnapshot | None]:
    """Fetch the card and remember it scrubbed of `hidden` (the workspace's secrets); None when not asked."""
    got = await fetch(entry)
    if not got.recorded:
        return got, None
    snap = await sync_to_async(card_history.record)(
        ws_root, entry, got.card, got.error, timezone.now(), hidden=hidden, extended=got.extended
    )
    return got, snap


def change_lines(changes: dict[str, Any]) -> list[str]:
    """A change in words, one line each: what the list and the card history show."""

    def skill(s: dict[str, Any]) -> str:
        return s["name"] if s["name"] == s["id"] else f"{s['name']} ({s['id']})"

    lines = [f"skill added: {skill(s)}" for s in changes.get("skills_added", [])]
    lines += [f"skill removed: {skill(s)}" for s in changes.get("skills_removed", [])]
    lines += [f"skill changed: {skill(s)}" for s in changes.get("skills_changed", [])]
    yes_no = {True: "yes", False: "no"}
    lines += [f"{c['name']}: {yes_no[c['old']]} → {yes_no[c['new']]}" for c in changes.get("capabilities", [])]
    if v := changes.get("version"):
        lines.append(f"version: {v['old'] or '(none)'} → {v['new'] or '(none)'}")
    if f := changes.get("fields"):
        lines.append("also changed: " + ", ".join(f))
    return lines


def ago(at: datetime | None) -> str:
    """How long ago, in words ("just now", "3 minutes ago"); "" for never."""
    if at is None:
        return ""
    if timezone.now() - at < timedelta(minutes=1):
        return "just now"
    return f"{timesince(at, depth=1)} ago"


def interfaces(entry: AgentEntry, card: dict[str, Any]) -> list[dict[str, Any]]:
    """The card's interfaces as the agent page shows them: where each points (masked), its origin, binding and
    version, whether the console calls it (`used`: the one `chosen` picks) and why (`why`)."""
    out = []
    for i in card.get("supportedInterfaces") or []:
        if isinstance(i, dict):
            url = str(i.get("url", ""))
            o = origin(url)
            out.append(
                {
                    "url": mask_url(url),
                    "origin": o or mask_url(url),
                    "binding": str(i.get("protocolBinding", "")),
                    "version": str(i.get("protocolVersion", "")),
                    "own": o == entry.origin,
                    "trusted": bool(o) and o in entry.trusted_origins,
                }
            )
    picked = chosen(out)
    for n, i in enumerate(out):
        i["used"] = n == picked
        i["why"] = _why(i, out[picked] if picked is not None else None, len(out))
    return out


BINDING_NAMES = {"JSONRPC": "JSON-RPC"}


def _callable(i: dict[str, Any]) -> bool:
    return bool(i["own"] or i["trusted"]) and i["binding"] in BINDINGS


def chosen(rows: list[dict[str, Any]]) -> int | None:
    """Which of the card's interfaces (`interfaces`) the console calls, picked as the SDK picks it: of those on the
    entry's origin or a trusted one, the card's first in a binding the console speaks; of those in that binding,
    version 1.0 first. None when it calls none."""
    callable_ = [n for n, i in enumerate(rows) if _callable(i)]
    if not callable_:
        return None
    same = [n for n in callable_ if rows[n]["binding"] == rows[callable_[0]]["binding"]]
    return next((n for n in same if rows[n]["version"] in ("1.0", "1.0.0")), same[0])


def _why(i: dict[str, Any], used: dict[str, Any] | None, listed: int) -> str:
    """Why an interface is used or not, in words (the agent page's list)."""
    if i is used:
        if i["trusted"] and not i["own"]:
            return "trusted by you"
        return "the card's first in a binding the console speaks" if listed > 1 else ""
    if not (i["own"] or i["trusted"]):
        return "another origin"
    if i["binding"] not in BINDINGS:
        return f"the console does not speak {i['binding'] or 'an interface without a binding'}"
    assert used is not None  # a callable interface exists: this one
    if i["binding"] == used["binding"]:
        return f"of its {i['binding']} interfaces, the console calls the A2A {used['version'] or '1.0'} one"
    return f"the card lists {used['binding']} first, which the console speaks"


def speaks(rows: list[dict[str, Any]]) -> str:
    """How the console speaks to the agent, "A2A 1.0 over JSON-RPC": the protocol version and binding of the
    interface it calls (`chosen`) of its card's `interfaces`. "" when it calls none."""
    picked = chosen(rows)
    if picked is None:
        return ""
    version, binding = rows[picked]["version"], rows[picked]["binding"]
    said = f"A2A {version}" if version else "A2A 1.0 (its card names no version)"
    return f"{said} over {BINDING_NAMES.get(binding, binding)}"


def elsewhere(rows: list[dict[str, Any]]) -> list[str]:
    """The origins the card's `interfaces` point calls at that the console does not call: the owner's to decide."""
    return sorted({i["origin"] for i in rows if not (i["own"] or i["trusted"])})


def _row(entry: AgentEntry, snap: CardSnapshot | None) -> dict[str, Any]:
    """One agent as the list shows it: the entry (no key, masked URL) and its last known card."""
    card = snap.card if snap is not None else {}
    caps = card.get("capabilities") or {}
    known = bool(card)
    rows = interfaces(entry, card)
    return {
        "name": entry.name,
        "masked_url": entry.masked_url,
        "has_key": bool(entry.key),
        "own_description": bool(entry.description),
        "description": entry.description or card.get("description", ""),
        "skills": [str(s.get("name") or s.get("id", "")) for s in card.get("skills") or [] if isinstance(s, dict)],
        "streaming": bool(caps.get("streaming")) if known else None,
        "push": bool(caps.get("pushNotifications")) if known else None,
        "version": card.get("version", ""),
        "speaks": speaks(rows),
        "elsewhere": elsewhere(rows),
        "checked_at": snap.checked_at if snap else None,
        "fetched_at": snap.fetched_at if snap else None,
        "error": snap.error if snap else "",
        "reachable": None if snap is None else not snap.error,
        "needs_key": entry.key_missing(card) if snap and not snap.error else "",
        "changed_at": snap.first_fetched_at if snap and snap.changes else None,
        "changes": change_lines(snap.changes) if snap else [],
        "checked_ago": ago(snap.checked_at if snap else None),
        "fetched_ago": ago(snap.fetched_at if snap else None),
        "changed_ago": ago(snap.first_fetched_at if snap and snap.changes else None),
    }


def _rows(ws_root: str, af: AgentsFile) -> list[dict[str, Any]]:
    snaps = card_history.latest(ws_root, [e.name for e in af.entries])
    return [_row(e, snaps.get(e.name)) for e in af.entries]


def _is_stale(snap: CardSnapshot | None, now: Any) -> bool:
    return snap is None or snap.checked_at < now - STALE_AFTER


def list_state() -> dict[str, Any]:
    """The agents list as agents.json says now, with the last known cards (the page, and its live fragment when
    the file changes): no card is fetched for it."""
    ws = scope.console_workspace()
    af = ws.read_agents()
    rows = _rows(str(ws.root), af)
    stale_before = timezone.now() - STALE_AFTER
    needs_refresh = any(r["checked_at"] is None or r["checked_at"] < stale_before for r in rows)
    return {"af": af, "agents": rows, "ws": ws, "needs_refresh": needs_refresh}


def agent_list(request: HttpRequest) -> HttpResponse:
    ctx = {"nav": "agents", "title": "Agents", "ws_url": "/ws/console/agents/", **list_state()}
    return render(request, "web/agents/list.html", ctx)


@live.register("agents")
class AgentsLive(live.ProgressBlind):
    """The agents list, when agents.json changed (by hand, another tab, the CLI): the list as the file is now."""

    def full(self, tab: live.Tab) -> list[str]:
        return [render_to_string("web/agents/list.html#agent-list", {**list_state(), "oob": True})]


@require_POST
async def agents_refresh(request: HttpRequest) -> HttpResponse:
    """Fetch the cards again, all of them or (`only=stale`, what the list asks on load) those not checked in
    the last STALE_AFTER, at most PARALLEL at once. htmx gets the table; a plain form post goes back to the list."""
    ws = scope.console_workspace()
    af = await sync_to_async(ws.read_agents)()
    root = str(ws.root)
    entries = af.entries
    if request.POST.get("only") == "stale":
        snaps = await sync_to_async(card_history.latest)(root, [e.name for e in entries])
        now = timezone.now()
        entries = [e for e in entries if _is_stale(snaps.get(e.name), now)]
    gate = asyncio.Semaphore(PARALLEL)
    hidden = card_history.secrets(af.entries)

    async def one(entry: AgentEntry) -> Fetched:
        async with gate:
            return (await fetch_and_record(root, entry, hidden))[0]

    fetched = await asyncio.gather(*(one(e) for e in entries))
    skipped = next((f.error for f in fetched if not f.recorded), "")
    if not request.headers.get("HX-Request"):
        if skipped:
            await sync_to_async(messages.error)(request, f"Cards not fetched: {skipped}")
        else:
            await sync_to_async(messages.success)(request, f"{len(entries)} card{'s' * (len(entries) != 1)} fetched.")
        return redirect("agents")
    rows = await sync_to_async(_rows)(root, af)
    ctx = {"af": af, "agents": rows, "skipped": skipped}
    return await sync_to_async(render)(request, "web/agents/list.html#agents-table", ctx)


@require_POST
async def agent_refetch(request: HttpRequest, name: str) -> HttpResponse:
    """Fetch one card now and say what changed; htmx gets the agent's row."""
    ws = scope.console_workspace()
    af = await sync_to_async(ws.read_agents)()
    entry = af.get(name)
    if entry is None:
        raise Http404("no such agent")
    got, snap = await fetch_and_record(str(ws.root), entry, card_history.secrets(af.entries))
    if snap is None:  # not asked (client off): the row keeps what was known
        snap = (await sync_to_async(card_history.latest)(str(ws.root), [name])).get(name)
    if request.headers.get("HX-Request"):
        ctx = {"a": _row(entry, snap), "skipped": "" if got.recorded else got.error}
        return await sync_to_async(render)(request, "web/agents/list.html#agent-row", ctx)
    if not got.recorded or got.card is None:
        await sync_to_async(messages.error)(request, f"Card of {name} not fetched: {got.error}")
    else:
        changed = change_lines(snap.changes) if snap and snap.fetched_at == snap.first_fetched_at else []
        said = "; ".join(changed) if changed else "nothing changed since the last fetch"
        await sync_to_async(messages.success)(request, f"Card of {name} fetched: {said}.")
    return redirect(reverse("agent", args=[name]) if request.POST.get("next") == "agent" else reverse("agents"))


async def agent_detail(request: HttpRequest, name: str) -> HttpResponse:
    """One agent: its entry, its card as read now (every visit fetches it again), and the card's history."""
    ws = scope.console_workspace()
    af = await sync_to_async(ws.read_agents)()
    entry = af.get(name)
    if entry is None:
        raise Http404("no such agent")
    target = await sync_to_async(scope.console_target)()
    hidden = card_history.secrets(af.entries)
    got, _ = await fetch_and_record(str(ws.root), entry, hidden)
    card = card_history.scrubbed(got.card, hidden) if got.card is not None else None
    rows = interfaces(entry, card) if card else []
    info = _card_info(entry, card, got, rows) if card is not None else None
    if card is None and got.recorded:
        info = {"name": entry.name, "unreachable": got.error}
    needs_key = entry.key_missing(card) if card is not None else ""
    if await request.session.apop(JUST_ADDED, None) == name:
        await sync_to_async(_say_added)(request, name, got, needs_key)
    snaps = await sync_to_async(card_history.history)(str(ws.root), name)
    ctx = {
        "nav": "agents",
        "title": name,
        "entry": {
            "name": entry.name,
            "masked_url": entry.masked_url,
            "has_key": bool(entry.key),
            "description": entry.description or "",
            "origin": entry.origin,
            "trusted_origins": entry.trusted_origins,
        },
        "interfaces": rows,
        "elsewhere": elsewhere(rows),
        "needs_key": needs_key,
        "info": info,
        "error": got.error if not got.recorded else None,
        "send_url": reverse("conversation", args=[target.id]),
        "version": af.version,
        "card_json": json.dumps(card, indent=2, ensure_ascii=False) if card else "",
        "card_meta": _card_meta(card) if card else {},
        "history": [{"snap": s, "changes": change_lines(s.changes)} for s in snaps],
        "keep": card_history.KEEP,
    }
    return await sync_to_async(render)(request, "web/agents/detail.html", ctx)


def _say_added(request: HttpRequest, name: str, got: Fetched, needs_key: str) -> None:
    """The message of an agent just added, once its card was asked for: added and usable, or added but unreachable
    (or lacking the key its card asks for), with the reason: a warning, not a success."""
    if got.card is None:
        messages.warning(request, f"Agent {name} was added, but it is unreachable: {got.error}")
    elif needs_key:
        messages.warning(
            request,
            f"Agent {name} was added, but its card asks for {needs_key} and this entry has none: "
            "its calls will be refused until you add it (Edit).",
        )
    else:
        messages.success(request, f"Agent {name} added.")


def _card_info(entry: AgentEntry, card: dict[str, Any], got: Fetched, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The card's summary as the agent page shows it (the same facts the tool's `agents` action gives); `rows`: its
    `interfaces`."""
    caps = card.get("capabilities") or {}
    interfaces = [i for i in card.get("supportedInterfaces") or [] if isinstance(i, dict)]
    return {
        "name": entry.name,
        "cardName": card.get("name", ""),
        "description": entry.description or card.get("description", ""),
        "skills": [
            {
                "id": s.get("id", ""),
                "name": s.get("name", ""),
                "description": s.get("description", ""),
                "examples": list(s.get("examples") or []),
                "tags": list(s.get("tags") or []),
            }
            for s in card.get("skills") or []
            if isinstance(s, dict)
        ],
        "streaming": bool(caps.get("streaming")),
        "push": bool(caps.get("pushNotifications")),
        "extendedCard": got.extended,
        "protocolVersions": sorted({str(i["protocolVersion"]) for i in interfaces if i.get("protocolVersion")}),
        "speaks": speaks(rows),
        "note": got.note,
    }


def _card_meta(card: dict[str, Any]) -> dict[str, Any]:
    """The card facts an owner looks for that the summary does not carry."""
    provider = card.get("provider") or {}

    def link(url: Any) -> str:  # only web addresses become links (a card could carry javascript:)
        return url if isinstance(url, str) and is_http_url(url) else ""

    return {
        "description": card.get("description", ""),
        "version": card.get("version", ""),
        "provider": provider.get("organization", ""),
        "provider_url": link(provider.get("url")),
        "docs": link(card.get("documentationUrl")),
        "input_modes": card.get("defaultInputModes") or [],
        "output_modes": card.get("defaultOutputModes") or [],
        "security": sorted((card.get("securitySchemes") or {}).keys()),
    }
