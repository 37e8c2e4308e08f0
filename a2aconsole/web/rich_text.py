"""Agents' text as the console shows it: CommonMark rendered by markdown-it-py, then cleaned by nh3, and JSON
highlighted by Pygments. Every byte of it comes from a remote agent, so two maintained libraries stand between
it and the page: markdown-it never passes raw HTML through, and nh3 keeps only the tags markdown makes, only
absolute http(s) and mailto links (rel="noopener noreferrer nofollow"), and no image at all (an image an
agent names is shown as a link to it: nothing is loaded from outside, and the CSP's img-src would refuse it)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import nh3
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import JsonLexer

LONG_LINES = 40  # a text longer than this, or than LONG_CHARS, shows its start with "Show all"
LONG_CHARS = 4096
SHORT_LINES = 4  # a text in a list (the dashboard's latest results): a few lines
SHORT_CHARS = 400
JSON_CHARS = 200_000  # JSON highlighted; a longer one (an agent's card, a raw task) is shown plain

_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "del", "s", "code", "pre",
    "blockquote", "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}


def _image_as_link(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """An image an agent names: a link to it, never loaded by the page."""
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = self.renderInlineAsText(token.children or [], options, env) or src
    return f'<a href="{escape(src)}">{escape(alt)} (image)</a>'


# a newline is a line break, as in chats; tables and ~~strikethrough~~ as agents write them (GitHub's)
_markdown = MarkdownIt("commonmark", {"html": False, "breaks": True}).enable(["table", "strikethrough"])
_markdown.add_render_rule("image", _image_as_link)
_cleaner = nh3.Cleaner(
    tags=_TAGS,
    attributes=_ATTRIBUTES,
    url_schemes={"http", "https", "mailto"},
    url_relative="deny",  # a link into the console itself is not the agent's to make
    link_rel="noopener noreferrer nofollow",
)


def markdown(text: str) -> SafeString:
    """`text` (an agent's, CommonMark) as safe HTML."""
    return mark_safe(_cleaner.clean(_markdown.render(text)))


@dataclass(frozen=True)
class AgentText:
    """One text an agent sent, ready for `web/_text.html`: the raw text, its HTML and whether it is long."""

    raw: str
    html: SafeString
    long: bool
    short: bool  # shown in a list: a few lines, then "Show all"


def agent_text(text: str, short: bool = False) -> AgentText:
    lines, chars = (SHORT_LINES, SHORT_CHARS) if short else (LONG_LINES, LONG_CHARS)
    long = len(text) > chars or text.count("\n") >= lines
    return AgentText(raw=text, html=markdown(text), long=long, short=short)


def json_html(value: Any) -> SafeString:
    """A JSON value (or JSON text) pretty-printed and highlighted with CSS classes (no inline style)."""
    text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
    if len(text) > JSON_CHARS:
        return mark_safe(f'<pre class="json">{escape(text)}</pre>')
    coloured = highlight(text, JsonLexer(), HtmlFormatter(nowrap=True))  # Pygments escapes the text
    return mark_safe(f'<pre class="json">{coloured}</pre>')
