"""The Content-Security-Policy checks shared by the page tests: the header is strict, and a page (or a
template) carries no inline code the policy would block."""

from __future__ import annotations

import re

from django.http import HttpResponseBase

SCRIPT = re.compile(r"<script\b([^<>]*)>(.*?)</script\s*>", re.S | re.I)
INLINE = {
    "a <style> block": re.compile(r"<style\b", re.I),
    "a style attribute": re.compile(r"<[a-z][^<>]*\sstyle\s*=", re.I),
    "an on* handler attribute": re.compile(r"<[a-z][^<>]*\son[a-z]+\s*=", re.I),
    "an hx-on attribute": re.compile(r"<[a-z][^<>]*\s(?:data-)?hx-on", re.I),
    "a javascript: URL": re.compile(r"""<[a-z][^<>]*\s(?:href|src|action)\s*=\s*["']?\s*javascript:""", re.I),
}


def inline_code(html: str) -> list[str]:
    """What in `html` (a page or a template) needs 'unsafe-inline' to work: one line per finding."""
    found = [
        f"an inline <script>: {m.group(0)[:80]!r}"
        for m in SCRIPT.finditer(html)
        if not re.search(r"\ssrc\s*=", m.group(1)) or m.group(2).strip()
    ]
    for what, pattern in INLINE.items():
        found += [f"{what}: {m.group(0)[:80]!r}" for m in pattern.finditer(html)]
    return found


STATIC_SOURCE = re.compile(r"https?://[a-z0-9.:\[\]-]+/static/")
DJANGO_TAG = re.compile(r"\{%.*?%\}|\{\{.*?\}\}|\{#.*?#\}", re.S)


def template_code(text: str) -> list[str]:
    """`inline_code` of a Django template: its tags blanked first (a `>` in `{% if a > b %}` would end a
    tag early), the markup they wrap kept, so a conditional attribute is checked too."""
    return inline_code(DJANGO_TAG.sub(" ", text))


def directives(response: HttpResponseBase) -> dict[str, list[str]]:
    """The response's policy as {directive: sources}; {} without the header."""
    header = response.headers.get("Content-Security-Policy", "")
    out: dict[str, list[str]] = {}
    for part in header.split(";"):
        name, *sources = part.split()
        out[name.lower()] = sources
    return out if header else {}


def assert_strict_csp(where: str, response: HttpResponseBase) -> None:
    """The console's policy is on the response: scripts and styles from its static folder only, nothing inline
    or eval'd."""
    policy = directives(response)
    assert policy, f"{where}: no Content-Security-Policy header"
    for name in ("script-src", "style-src"):  # the static folder only, at the request's origin; or nothing
        sources = policy.get(name, policy.get("default-src")) or []
        ok = sources == ["'none'"] or (len(sources) == 1 and STATIC_SOURCE.fullmatch(sources[0]))
        assert ok, f"{where}: {name} is {sources}"
    for name, sources in policy.items():
        loose = {"'unsafe-inline'", "'unsafe-eval'", "'unsafe-hashes'", "*", "data:", "http:", "https:"} & {*sources}
        assert not loose, f"{where}: {name} allows {sources}"
    assert policy["default-src"] == ["'self'"], where
    assert policy["object-src"] == ["'none'"] and policy["frame-ancestors"] == ["'none'"], where
    assert policy["base-uri"] == ["'self'"] and policy["form-action"] == ["'self'"], where
    assert policy["connect-src"] == ["'self'"], where
    assert "Content-Security-Policy-Report-Only" not in response.headers, where
