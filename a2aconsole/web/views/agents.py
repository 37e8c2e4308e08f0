"""Agents over `agents.json`: list, add, edit, delete, the raw file editor, and one agent's card.

Forms carry the file's version; a save from a stale version shows the conflict instead of overwriting.
Keys are write-only here: pages say "key set" or "no key", and only the raw editor, on request, shows them.
"""

from __future__ import annotations

import json
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from a2aconsole.core.agents import mask_url
from a2aconsole.core.errors import ConflictError, ValidationError
from a2aconsole.core.workspace import AgentsFile, Workspace
from a2aconsole.web.forms import AgentForm, RawAgentsForm, VersionForm
from a2aconsole.web.views import scope


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


def agent_list(request: HttpRequest) -> HttpResponse:
    ws = scope.console_workspace()
    af = ws.read_agents()
    return render(
        request,
        "web/agents/list.html",
        {"nav": "agents", "title": "Agents", "af": af, "agents": [_entry_view(e) for e in af.entries], "ws": ws},
    )


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
        "broken": _broken(af),
    }


def _conflict(request: HttpRequest, ws: Workspace, form: AgentForm, what: str, original: str = "") -> HttpResponse:
    af = ws.read_agents()
    d = form.cleaned_data
    current = af.get(original or d.get("name", ""))
    fresh = AgentForm(
        initial={
            "name": d.get("name", ""),
            "url": d.get("url", ""),
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
            "description": d.get("description", ""),
            "typed_key": bool(d.get("key")),
        },
        "current": _entry_view(current),
        "form": fresh,
        "original": original,
        "broken": _broken(af),
    }
    return render(request, "web/agents/conflict.html", ctx, status=409)


def agent_add(request: HttpRequest) -> HttpResponse:
    ws = scope.console_workspace()
    if request.method == "POST":
        form = AgentForm(request.POST, adding=True)
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
            messages.success(request, f"Agent {form.cleaned_data['name']} added.")
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
            raw[i] = form.apply(raw[i])
            try:
                ws.save_agents(raw, form.cleaned_data["version"])
            except ConflictError:
                return _conflict(request, ws, form, "edit", original=name)
            except ValidationError as e:
                for p in e.problems:
                    form.add_error(None, p)
                return render(request, "web/agents/form.html", _form_ctx(form, "edit", ws, entry), status=400)
            messages.success(request, f"Agent {new_name} saved.")
            return redirect("agent", name=new_name)
        return render(request, "web/agents/form.html", _form_ctx(form, "edit", ws, entry), status=400)
    if entry is None:
        raise Http404("no such agent")
    form = AgentForm(
        initial={"name": entry.name, "url": entry.url, "description": entry.description or "", "version": af.version}
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
            del raw[i]
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
            return render(request, "web/agents/conflict.html", ctx, status=409)
        messages.success(request, f"Agent {name} deleted.")
        return redirect("agents")
    if entry is None:
        raise Http404("no such agent")
    return render(
        request,
        "web/agents/delete.html",
        {"nav": "agents", "title": f"Delete {name}", "entry": _entry_view(entry), "version": af.version},
    )


def agents_file(request: HttpRequest) -> HttpResponse:
    """The raw editor. The file holds keys, so its text is shown only when asked for (`?show=1`)."""
    ws = scope.console_workspace()
    af = ws.read_agents()
    ctx: dict[str, Any] = {"nav": "agents", "title": "Edit agents.json", "af": af, "path": str(af.path)}
    if request.method == "POST":
        form = RawAgentsForm(request.POST)
        if form.is_valid():
            try:
                ws.save_agents_text(form.cleaned_data["text"], form.cleaned_data["version"])
            except ValidationError as e:
                ctx.update(form=form, show=True, problems=e.problems)
                return render(request, "web/agents/file.html", ctx, status=400)
            except ConflictError as e:
                fresh = RawAgentsForm(initial={"text": form.cleaned_data["text"], "version": e.current_version})
                ctx.update(form=fresh, show=True, conflict=True, current_text=e.current_text)
                return render(request, "web/agents/file.html", ctx, status=409)
            messages.success(request, "agents.json saved.")
            return redirect("agents")
        ctx.update(form=form, show=True)
        return render(request, "web/agents/file.html", ctx, status=400)
    show = request.GET.get("show") == "1"
    ctx["show"] = show
    if show:
        ctx["form"] = RawAgentsForm(initial={"text": af.text or "[\n]\n", "version": af.version})
    return render(request, "web/agents/file.html", ctx)


async def agent_detail(request: HttpRequest, name: str) -> HttpResponse:
    """One agent: its entry, and its card as the tool reads it now (every visit fetches it again)."""
    ws = scope.console_workspace()
    af = await sync_to_async(ws.read_agents)()
    entry = af.get(name)
    if entry is None:
        raise Http404("no such agent")
    target = await sync_to_async(scope.console_target)()
    result = await scope.run_tool("agents", {"agent": name}, target.id)
    info = _pick_agent(result, name)
    ctx = {
        "nav": "agents",
        "title": name,
        "entry": _entry_view(entry),
        "info": info,
        "error": result.get("error") if not info else None,
        "send_url": reverse("conversation", args=[target.id]),
        "version": af.version,
    }
    return render(request, "web/agents/detail.html", ctx)


def _pick_agent(result: dict[str, Any], name: str) -> dict[str, Any] | None:
    for a in result.get("agents") or []:
        if isinstance(a, dict) and a.get("name") == name:
            return a
    return None
