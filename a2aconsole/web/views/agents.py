"""Agents over `agents.json`: add, edit, delete and the raw file editor (the list and the cards are in
`agent_cards.py`).

Forms carry the file's version; a save from a stale version shows the conflict instead of overwriting.
Keys are write-only here: pages say "key set" or "no key", URLs show scheme, host, port and path only, and
the raw editor shows placeholders for both that it puts back on save. Only a file too broken to parse is
shown as it is, and only when the owner asks.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from a2aconsole.core.errors import ConflictError, ValidationError
from a2aconsole.core.files import AgentsFile, Workspace, mask_url
from a2aconsole.web import audit, card_history, scope
from a2aconsole.web.agents_text import (
    HIDDEN_KEY,
    HIDDEN_URL_PARTS,
    TYPED_KEY,
    TYPED_URL_PARTS,
    masked_text,
    unmasked_text,
    without_typed_secrets,
)
from a2aconsole.web.file_conflict import marker_lines, merged, side_by_side, unified
from a2aconsole.web.forms import AgentForm, OriginForm, RawAgentsForm, VersionForm
from a2aconsole.web.views.agent_cards import JUST_ADDED

log = logging.getLogger(__name__)

# A conflict page answers 200, not 409: it is the way forward, not a failure, and a browser logs every 4xx
# page as a console error. It says "nothing was saved" in words, and the file is untouched.
CONFLICT_PAGE = 200


def _raw_entries(af: AgentsFile) -> list[Any]:
    """The file's entries as stored (unknown fields kept); [] for a missing file."""
    if not af.text:
        return []
    data = json.loads(af.text)
    return data if isinstance(data, list) else []


def _index_of(raw: list[Any], name: str) -> int | None:
    return next((i for i, e in enumerate(raw) if isinstance(e, dict) and e.get("name") == name), None)


def _entry_view(entry: Any) -> dict[str, Any] | None:
    """What a page may show of an entry: no key, masked URL."""
    if entry is None:
        return None
    return {
        "name": entry.name,
        "masked_url": entry.masked_url,
        "has_key": bool(entry.key),
        "description": entry.description or "",
    }


def _audit(request: HttpRequest, action: str, subject: str, detail: str) -> None:
    """The audit entry of a save that succeeded; a save from a conflict page says so."""
    if request.POST.get("after_conflict") == "1":
        detail = f"{detail}; {audit.AFTER_CONFLICT}"
    audit.record(request, action, subject, detail=detail)


def _broken(af: AgentsFile) -> str | None:
    """Why the forms cannot save now (the file must be fixed in the editor first), or None."""
    if af.parse_error:
        return af.parse_error
    if af.problems:
        return "agents.json has problems: " + "; ".join(af.problems)
    return None


def _save(request: HttpRequest, ws: Workspace, form: AgentForm, raw: list[Any], what: str) -> HttpResponse | None:
    """Write `raw`; None when saved, else the conflict view. Validation problems go onto the form."""
    try:
        ws.save_agents(raw, form.cleaned_data["version"])
    except ConflictError:
        return _conflict(request, ws, form, what)
    except ValidationError as e:
        for p in e.problems:
            form.add_error(None, p)
        return render(request, "web/agents/form.html", _form_ctx(form, what, ws), status=400)
    return None


def _form_ctx(form: AgentForm, what: str, ws: Workspace, entry: Any = None) -> dict[str, Any]:
    af = ws.read_agents()
    return {
        "nav": "agents",
        "title": "Add an agent" if what == "add" else f"Edit {entry.name if entry else 'agent'}",
        "form": form,
        "what": what,
        "entry": _entry_view(entry),
        "url_hidden_parts": entry is not None and entry.url != entry.masked_url,
        "broken": _broken(af),
    }


def _shown(entry: dict[str, Any], stored: dict[str, Any] | None) -> dict[str, Any]:
    """An entry as a conflict page may show it: the stored key and URL secrets as placeholders, and the ones
    the owner typed as TYPED_* placeholders (never shown back)."""
    out = dict(entry)
    if out.get("key"):
        out["key"] = HIDDEN_KEY if stored and out["key"] == stored.get("key") else TYPED_KEY
    url = out.get("url")
    if isinstance(url, str) and url != mask_url(url):
        kept = stored is not None and url == stored.get("url")
        out["url"] = mask_url(url) + (HIDDEN_URL_PARTS if kept else TYPED_URL_PARTS)
    return out


def _conflict(request: HttpRequest, ws: Workspace, form: AgentForm, what: str, original: str = "") -> HttpResponse:
    """The form's conflict page: the entry in the file now against yours, and keep yours, keep the file's,
    or edit a merge (the form again, from the current version)."""
    af = ws.read_agents()
    d = form.cleaned_data
    current = af.get(original or d.get("name", ""))
    try:
        raw = _raw_entries(af)
    except ValueError:
        raw = []
    i = _index_of(raw, original or d.get("name", ""))
    stored = raw[i] if i is not None and isinstance(raw[i], dict) else None
    yours = form.apply(dict(stored or {}))
    stored_url = stored.get("url") if stored else None
    if isinstance(stored_url, str) and d.get("url") == mask_url(stored_url):
        yours["url"] = stored_url  # the form showed it masked: its hidden parts stay
    theirs_text = json.dumps(_shown(stored, stored), indent=2, ensure_ascii=False) if stored else ""
    yours_shown = _shown(yours, stored)
    yours_text = json.dumps(yours_shown, indent=2, ensure_ascii=False)
    typed_secret = TYPED_KEY in yours_text or TYPED_URL_PARTS in yours_text
    shown_url = str(yours_shown.get("url", "")).removesuffix(HIDDEN_URL_PARTS).removesuffix(TYPED_URL_PARTS)
    fresh = AgentForm(
        initial={
            "name": d.get("name", ""),
            "url": shown_url,
            "description": d.get("description", ""),
            "version": af.version,
        }
    )
    ctx = {
        "nav": "agents",
        "title": "The agents file changed",
        "what": what,
        "mine": {
            "name": d.get("name", ""),
            "masked_url": mask_url(d.get("url", "")),
            "url": shown_url,
            "description": d.get("description", ""),
            "typed_key": bool(d.get("key")),
            "remove_key": bool(d.get("remove_key")),
        },
        "rows": side_by_side(theirs_text, yours_text),
        "typed_secret": typed_secret,
        "current": _entry_view(current),
        "form": fresh,
        "version": af.version,
        "original": original,
        "broken": _broken(af),
    }
    return render(request, "web/agents/conflict.html", ctx, status=CONFLICT_PAGE)


def _keep_file(request: HttpRequest, ws: Workspace, form: AgentForm, what: str, original: str = "") -> HttpResponse:
    """ "Keep the file's" on the form's conflict page: nothing is written; from a version that is no longer
    the file's, the conflict page comes back with the newer file instead."""
    af = ws.read_agents()
    if form.cleaned_data["version"] != af.version:
        return _conflict(request, ws, form, what, original)
    subject = original or form.cleaned_data["name"]
    audit.record(request, "agents-file-kept", subject, detail=audit.FILE_KEPT)
    messages.success(request, "agents.json kept as it is; your change was not saved.")
    return redirect("agent", name=subject) if af.get(subject) is not None else redirect("agents")


def agent_add(request: HttpRequest) -> HttpResponse:
    ws = scope.console_workspace()
    if request.method == "POST":
        form = AgentForm(request.POST, adding=True)
        if form.is_valid() and request.POST.get("resolution") == "file":
            return _keep_file(request, ws, form, "add")
        if form.is_valid():
            af = ws.read_agents()
            if (why := _broken(af)) is not None:
                form.add_error(None, f"{why}. Fix the file first.")
                return render(request, "web/agents/form.html", _form_ctx(form, "add", ws), status=400)
            raw = _raw_entries(af)
            if _index_of(raw, form.cleaned_data["name"]) is not None and af.version == form.cleaned_data["version"]:
                form.add_error("name", "An agent with this name exists already; pick another name or edit that one.")
                return render(request, "web/agents/form.html", _form_ctx(form, "add", ws), status=400)
            raw.append(form.apply({}))
            if (resp := _save(request, ws, form, raw, "add")) is not None:
                return resp
            _audit(request, "agent-added", form.cleaned_data["name"], audit.entry_summary(raw[-1]))
            request.session[JUST_ADDED] = form.cleaned_data["name"]  # its page says so, once it asked for the card
            return redirect("agent", name=form.cleaned_data["name"])
        return render(request, "web/agents/form.html", _form_ctx(form, "add", ws), status=400)
    form = AgentForm(initial={"version": ws.read_agents().version}, adding=True)
    return render(request, "web/agents/form.html", _form_ctx(form, "add", ws))


def agent_edit(request: HttpRequest, name: str) -> HttpResponse:
    ws = scope.console_workspace()
    af = ws.read_agents()
    entry = af.get(name)
    if request.method == "POST":
        form = AgentForm(request.POST)
        if form.is_valid() and request.POST.get("resolution") == "file":
            return _keep_file(request, ws, form, "edit", original=name)
        if form.is_valid():
            if form.cleaned_data["version"] != af.version:
                return _conflict(request, ws, form, "edit", original=name)
            if (why := _broken(af)) is not None:
                form.add_error(None, f"{why}. Fix the file first.")
                return render(request, "web/agents/form.html", _form_ctx(form, "edit", ws, entry), status=400)
            raw = _raw_entries(af)
            i = _index_of(raw, name)
            if i is None:
                return _conflict(request, ws, form, "edit", original=name)
            new_name = form.cleaned_data["name"]
            if new_name != name and _index_of(raw, new_name) is not None:
                form.add_error("name", "Another agent has this name already.")
                return render(request, "web/agents/form.html", _form_ctx(form, "edit", ws, entry), status=400)
            stored = raw[i].get("url") if isinstance(raw[i], dict) else None
            if isinstance(stored, str) and form.cleaned_data["url"] == mask_url(stored):
                form.cleaned_data["url"] = stored  # the form showed it masked: the hidden parts stay
            old = dict(raw[i]) if isinstance(raw[i], dict) else {}
            raw[i] = form.apply(raw[i])
            try:
                ws.save_agents(raw, form.cleaned_data["version"])
            except ConflictError:
                return _conflict(request, ws, form, "edit", original=name)
            except ValidationError as e:
                for p in e.problems:
                    form.add_error(None, p)
                return render(request, "web/agents/form.html", _form_ctx(form, "edit", ws, entry), status=400)
            _audit(request, "agent-edited", new_name, audit.entry_changes(old, raw[i]))
            if new_name != name:
                card_history.rename(str(ws.root), name, new_name)
            messages.success(request, f"Agent {new_name} saved.")
            return redirect("agent", name=new_name)
        return render(request, "web/agents/form.html", _form_ctx(form, "edit", ws, entry), status=400)
    if entry is None:
        raise Http404("no such agent")
    form = AgentForm(
        initial={
            "name": entry.name,
            "url": entry.masked_url,
            "description": entry.description or "",
            "version": af.version,
        }
    )
    return render(request, "web/agents/form.html", _form_ctx(form, "edit", ws, entry))


def agent_delete(request: HttpRequest, name: str) -> HttpResponse:
    ws = scope.console_workspace()
    af = ws.read_agents()
    entry = af.get(name)
    if request.method == "POST":
        form = VersionForm(request.POST)
        if not form.is_valid():
            return redirect("agents")
        raw = _raw_entries(af) if not af.parse_error else []
        i = _index_of(raw, name)
        stale = form.cleaned_data["version"] != af.version
        if not stale and i is not None:
            gone = raw.pop(i)
            try:
                ws.save_agents(raw, form.cleaned_data["version"])
            except ConflictError:
                stale = True
            except ValidationError as e:
                messages.error(request, "Not deleted: " + "; ".join(e.problems))
                return redirect("agents")
        if stale or i is None:
            ctx = {
                "nav": "agents",
                "title": "The agents file changed",
                "what": "delete",
                "current": _entry_view(ws.read_agents().get(name)),
                "name": name,
                "version": ws.read_agents().version,
            }
            return render(request, "web/agents/conflict.html", ctx, status=CONFLICT_PAGE)
        _audit(request, "agent-deleted", name, audit.entry_summary(gone))
        card_history.forget(str(ws.root), name)
        messages.success(request, f"Agent {name} deleted.")
        return redirect("agents")
    if entry is None:
        raise Http404("no such agent")
    return render(
        request,
        "web/agents/delete.html",
        {"nav": "agents", "title": f"Delete {name}", "entry": _entry_view(entry), "version": af.version},
    )


@require_POST
def agent_origin(request: HttpRequest, name: str) -> HttpResponse:
    """Trust (or stop trusting) another origin for the agent's calls: its card named an interface there, which
    the console does not call unless the owner says so here. Recorded in the entry's `trustedOrigins`."""
    ws = scope.console_workspace()
    af = ws.read_agents()
    form = OriginForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Not changed: " + "; ".join(e for errs in form.errors.values() for e in errs))
        return redirect("agent", name=name) if af.get(name) is not None else redirect("agents")
    d = form.cleaned_data
    stale = d["version"] != af.version
    raw = [] if stale or _broken(af) else _raw_entries(af)
    i = _index_of(raw, name)
    if i is None or not isinstance(raw[i], dict):
        why = _broken(af) if not stale else None
        messages.error(request, f"Not changed: {why or 'agents.json changed since the page was shown; look again'}.")
        return redirect("agent", name=name) if af.get(name) is not None else redirect("agents")
    entry = af.get(name)
    trusted = [o for o in entry.trusted_origins if o != d["origin"]] if entry else []
    if d["action"] == "trust":
        trusted.append(d["origin"])
    if trusted:
        raw[i]["trustedOrigins"] = trusted
    else:
        raw[i].pop("trustedOrigins", None)
    try:
        ws.save_agents(raw, d["version"])
    except (ConflictError, ValidationError) as e:
        why = "; ".join(e.problems) if isinstance(e, ValidationError) else "agents.json changed meanwhile; look again"
        messages.error(request, f"Not changed: {why}.")
        return redirect("agent", name=name)
    if d["action"] == "trust":
        audit.record(request, "agent-origin-trusted", name, detail=d["origin"])
        messages.success(
            request,
            f"{name}: calls may now go to {d['origin']} (its key is still sent only to "
            f"{entry.origin if entry else 'its own origin'}).",
        )
    else:
        audit.record(request, "agent-origin-revoked", name, detail=d["origin"])
        messages.success(request, f"{name}: no more calls go to {d['origin']}.")
    return redirect("agent", name=name)


def agents_file(request: HttpRequest) -> HttpResponse:
    """The raw editor. Keys show as HIDDEN_KEY and are put back on save; only a malformed file (which
    cannot be parsed to hide them) is shown as it is, and then only when asked for (`?show=1`).

    A save from a stale version shows the conflict page: the two texts compared, and three ways out (keep
    yours, keep the file's, save a merge), each made from the version the page showed, so a file changed
    again meanwhile brings the conflict page back instead of being overwritten."""
    ws = scope.console_workspace()
    af = ws.read_agents()
    ctx: dict[str, Any] = {"nav": "agents", "title": "Edit agents.json", "af": af, "path": str(af.path)}
    ctx.update(hidden_key=HIDDEN_KEY, hidden_url=HIDDEN_URL_PARTS.strip())
    if request.method == "POST":
        form = RawAgentsForm(request.POST)
        if not form.is_valid():
            ctx.update(form=form, show=True)
            return _no_store(render(request, "web/agents/file.html", ctx, status=400))
        d = form.cleaned_data
        resolution, posted = d["resolution"], d["text"]
        if resolution == "file":
            if d["version"] != af.version:
                return _file_conflict(request, af, posted, d["base"])
            audit.record(request, "agents-file-kept", "agents.json", detail=audit.FILE_KEPT)
            messages.success(request, "agents.json kept as it is; your change was not saved.")
            return redirect("agents")
        if resolution == "merge" and (marks := marker_lines(posted)):
            where = ", ".join(map(str, marks[:10]))
            problem = (
                f"the merge still has conflict markers (lines {where}): keep one side of each, remove the marker lines"
            )
            return _file_conflict(request, af, posted, d["base"], problems=[problem], merge_text=posted)
        text, problems = unmasked_text(posted, af)
        try:
            if problems:
                raise ValidationError(problems)
            ws.save_agents_text(text, d["version"])
        except ValidationError as e:
            if resolution:
                return _file_conflict(request, af, posted, d["base"], problems=e.problems, merge_text=posted)
            ctx.update(form=form, show=True, problems=e.problems)
            return _no_store(render(request, "web/agents/file.html", ctx, status=400))
        except ConflictError:
            return _file_conflict(request, ws.read_agents(), posted, d["base"])
        detail = audit.file_changes(af.text, text)
        if resolution:
            detail = f"{detail}; {audit.FILE_KEPT_YOURS if resolution == 'yours' else audit.FILE_MERGED}"
        _audit(request, "agents-file-saved", "agents.json", detail)
        messages.success(request, "agents.json saved.")
        return redirect("agents")
    masked = masked_text(af.text)
    show = masked is not None or request.GET.get("show") == "1"
    ctx.update(show=show, keys_visible=masked is None)
    if show:
        text = masked if masked is not None else af.text
        ctx["form"] = RawAgentsForm(initial={"text": text, "version": af.version, "base": text})
    return _no_store(render(request, "web/agents/file.html", ctx))


def _file_conflict(
    request: HttpRequest,
    current: AgentsFile,
    yours: str,
    base: str | None,
    *,
    problems: list[str] | None = None,
    merge_text: str | None = None,
) -> HttpResponse:
    """The conflict page: the file now against your text (secrets as placeholders on both sides), and the
    three forms, each carrying the version shown here."""
    theirs = masked_text(current.text)
    yours = without_typed_secrets(yours)
    if merge_text is not None:
        merge, conflicts = without_typed_secrets(merge_text), len(marker_lines(merge_text)) // 3
    elif theirs is not None:
        merge, conflicts = merged(without_typed_secrets(base) if base is not None else None, yours, theirs)
    else:
        merge, conflicts = yours, -1
    ctx = {
        "nav": "agents",
        "title": "agents.json changed",
        "path": str(current.path),
        "theirs": theirs,
        "yours": yours,
        "typed_secret": TYPED_KEY in yours or TYPED_URL_PARTS in yours,
        "rows": side_by_side(theirs, yours) if theirs is not None else [],
        "unified": unified(theirs, yours) if theirs is not None else "",
        "same": theirs is not None and theirs == yours,
        "merge": merge,
        "conflicts": conflicts,
        "version": current.version,
        "problems": problems or [],
        "parse_error": current.parse_error,
    }
    return _no_store(render(request, "web/agents/file_conflict.html", ctx, status=CONFLICT_PAGE))


def _no_store(resp: HttpResponse) -> HttpResponse:
    """The editor's text is the owner's file: no cache keeps a copy."""
    resp["Cache-Control"] = "no-store"
    return resp
