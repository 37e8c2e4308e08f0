"""`{% load text %}`: agents' text (markdown, collapsed when long), data parts and forms, JSON highlighted, ids
shown short."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.safestring import SafeString

from a2aconsole.core.data_parts import event_data_parts
from a2aconsole.web import data_forms, data_view, rich_text
from a2aconsole.web import event_words as event_words_module

register = template.Library()

SHORT_ID = 8  # characters of an id shown; the whole one is on hover and in the copy button


@register.inclusion_tag("web/_text.html")
def agent_text(text: str, short: bool = False, small: bool = False) -> dict[str, Any]:
    """An agent's text: rendered markdown with Raw, Copy, and Show all / Download when it is long."""
    return {"t": rich_text.agent_text(str(text or ""), short=short), "small": small}


@register.filter
def json_html(value: Any) -> SafeString:
    return rich_text.json_html(value)


@register.inclusion_tag("web/_id.html")
def short_id(value: str, label: str = "id", href: str = "") -> dict[str, Any]:
    """An id shown by its first characters (a link to `href` if given), the whole on hover, with a copy button."""
    value = str(value or "")
    short = value[:SHORT_ID] + ("…" if len(value) > SHORT_ID else "")
    return {"value": value, "short": short, "label": label, "href": href}


@register.simple_tag
def event_words(ev: Any) -> str:
    """What the console did, in the owner's words (`web.event_words`)."""
    data = ev.data if isinstance(ev.data, dict) else {}
    return event_words_module.describe(ev.kind, data, ev.target, ev.state or "", getattr(ev, "created_at", None))


@register.filter
def data_views(data: Any, offered: str = "") -> dict[str, Any]:
    """What `web/_data.html` shows of an event's data: its data parts as views (a sent answer's `data` too), those
    saved as files, how many more, and why a form is not offered. `offered="form"`: the page offers the form (an
    open question), so that part shows as the form instead (`data_form`)."""
    if not isinstance(data, dict):
        return {}
    parts = data.get("dataParts")
    if parts is None and isinstance(data.get("data"), dict):  # a `sent` event: the owner's own data answer
        parts = [{"data": data["data"], "in": "you sent"}]
    elif parts is None and ("artifacts" in data or "messageData" in data):  # a tool result (Re-check, Cancel)
        parts, more = event_data_parts(data)
        data = {"dataParts": parts, "dataPartsMore": more}
    found = data_forms.form_part(data)
    skip = found[0] if offered == "form" and data_forms.form_of(data) is not None and found else -1
    parts = [p for i, p in enumerate(parts or ()) if isinstance(p, dict) and i != skip]
    return {
        "views": [data_view.view(p) for p in parts if "data" in p],
        "files": [p for p in parts if "file" in p],
        "more": data.get("dataPartsMore") or 0,
        "not_offered": data_forms.why_not_offered(found[1]) if offered == "form" and found else "",
    }


@register.filter
def data_form(data: Any) -> data_forms.DataForm | None:
    """The form an open question's data offers (`web/_data_form.html`), None for none."""
    return data_forms.form_of(data)
