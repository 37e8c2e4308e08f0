"""Agents' markdown made safe (`web.rich_text`): whatever an agent writes, the page gets only markdown's own
tags, absolute http(s)/mailto links marked nofollow, no image, no script, no style, no event handler."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from a2aconsole.web.rich_text import LONG_LINES, agent_text, json_html, markdown

HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "[x](data:text/html;base64,PHNjcmlwdD4=)",
    "[x](vbscript:msgbox)",
    '<a href="https://e.com" onclick="alert(1)">x</a>',
    "![x](javascript:alert(1))",
    '<div style="position:fixed">x</div>',
    "<iframe src=https://e.com></iframe>",
    "[x](//evil.example/path)",
    "<svg onload=alert(1)>",
]


class Tags(HTMLParser):
    """Every tag and attribute of a piece of HTML, as a browser would parse it."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str | None]]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, dict(attrs)))


@pytest.mark.parametrize("text", HOSTILE)
def test_nothing_an_agent_writes_runs_or_loads(text: str) -> None:
    for tag, attrs in Tags(markdown(text)).found:
        assert tag in ("p", "a"), (text, tag)
        assert set(attrs) <= {"href", "rel"}, (text, attrs)  # no on*, no style
        href = attrs.get("href")
        assert href is None or href.startswith("https://"), (text, href)


def test_markdown_is_rendered_with_safe_links() -> None:
    html = markdown("**b** _i_ `c` [ok](https://e.com/a?b=1) [mail](mailto:o@e.com) [in](/agents/)\n\n1. one\n2. two")
    assert "<strong>b</strong>" in html and "<em>i</em>" in html and "<code>c</code>" in html and "<ol>" in html
    assert '<a href="https://e.com/a?b=1" rel="noopener noreferrer nofollow">ok</a>' in html
    assert 'href="mailto:o@e.com"' in html
    assert 'href="/agents/"' not in html and ">in</a>" in html  # a link into the console: text only
    assert markdown("a\nb") == "<p>a<br>\nb</p>\n"  # a newline is a line break, as in chats


def test_an_image_is_a_link_to_it_never_loaded() -> None:
    html = markdown("![a chart](https://e.com/c.png)")
    assert "<img" not in html and '<a href="https://e.com/c.png"' in html and "a chart (image)" in html


def test_long_and_short_texts() -> None:
    assert not agent_text("one line").long
    assert agent_text("\n".join(["x"] * (LONG_LINES + 1))).long and agent_text("y" * 5000).long
    assert not agent_text("\n".join(["x"] * 30)).long
    assert agent_text("a\nb\nc\nd\ne", short=True).long and not agent_text("a\nb\nc\nd\ne").long


def test_json_is_highlighted_and_escaped() -> None:
    html = json_html({"key": "<b>", "n": 1, "t": True, "z": None})
    assert html.startswith('<pre class="json">') and '<span class="nt">"key"</span>' in html
    assert "<b>" not in html and "&lt;b&gt;" in html
    assert '<span class="kc">true</span>' in html and '<span class="mi">1</span>' in html
