"""`{% load text %}`: agents' text (markdown, collapsed when long), JSON highlighted, ids shown short."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.safestring import SafeString

from a2aconsole.web import event_words as event_words_module
from a2aconsole.web import rich_text

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
