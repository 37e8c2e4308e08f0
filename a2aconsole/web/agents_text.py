"""agents.json as the raw editor shows it: keys and the hidden parts of URLs replaced by placeholders that a
save puts back from the stored entry of the same name, so the text can be shown, compared and merged
without a secret in the page. A secret the owner typed is never shown back either: on a conflict page it
becomes a TYPED_* placeholder, and a save that still holds one asks for it again.
"""

from __future__ import annotations

import json
import re
from typing import Any

from a2aconsole.core.files import AgentsFile, mask_url

HIDDEN_KEY = "(hidden: the key stays as it is)"
HIDDEN_URL_PARTS = " (+ hidden parts, kept)"


def masked_text(text: str | None) -> str | None:
    """The file's text with every key replaced by HIDDEN_KEY, or None when it is not a JSON array (a
    malformed file is edited as it is). A file without keys keeps its formatting."""
    try:
        data = json.loads(text or "[]")
    except ValueError:
        return None
    if not isinstance(data, list):
        return None
    if not any(isinstance(e, dict) and (e.get("key") or _url_hides(e.get("url"))) for e in data):
        return text or "[\n]\n"
    masked = []
    for e in data:
        if isinstance(e, dict):
            e = dict(e)
            if e.get("key"):
                e["key"] = HIDDEN_KEY
            if _url_hides(e.get("url")):
                e["url"] = mask_url(e["url"]) + HIDDEN_URL_PARTS
        masked.append(e)
    return json.dumps(masked, indent=2, ensure_ascii=False) + "\n"


def _url_hides(url: Any) -> bool:
    """Whether the URL has parts a page never shows (user, password, query, fragment)."""
    return isinstance(url, str) and bool(url) and url != mask_url(url)


def unmasked_text(text: str, current: AgentsFile) -> tuple[str, list[str]]:
    """The edited text with each HIDDEN_KEY put back from the stored entry of the same name; problems
    when a hidden key has no entry to come from (renamed or new)."""
    if not any(m in text for m in (HIDDEN_KEY, HIDDEN_URL_PARTS, TYPED_KEY, TYPED_URL_PARTS)):
        return text, []
    try:
        data = json.loads(text)
    except ValueError:
        return text, []  # the file layer reports the JSON error
    if not isinstance(data, list):
        return text, []
    try:
        stored = _stored(current)
    except ValueError:
        stored = []
    by_name = {e["name"]: e for e in stored if isinstance(e, dict) and isinstance(e.get("name"), str)}
    keys = {n: e["key"] for n, e in by_name.items() if isinstance(e.get("key"), str) and e["key"]}
    problems: list[str] = []
    for e in data:
        url = e.get("url") if isinstance(e, dict) else None
        if isinstance(url, str) and url.endswith(TYPED_URL_PARTS):
            problems.append(f'entry "{e.get("name")}": type its whole URL again (what you typed is not shown back)')
        elif isinstance(url, str) and url.endswith(HIDDEN_URL_PARTS):
            old = by_name.get(e.get("name"), {}).get("url")
            if isinstance(old, str) and mask_url(old) + HIDDEN_URL_PARTS == url:
                e["url"] = old
            else:
                problems.append(
                    f'entry "{e.get("name")}": its URL has hidden parts and no saved entry matches; type the whole URL'
                )
        if isinstance(e, dict) and e.get("key") == TYPED_KEY:
            problems.append(f'entry "{e.get("name")}": type its key again (a key you typed is not shown back)')
        elif isinstance(e, dict) and e.get("key") == HIDDEN_KEY:
            name = e.get("name")
            if isinstance(name, str) and name in keys:
                e["key"] = keys[name]
            else:
                problems.append(
                    f'entry "{name}": its key is hidden and no saved entry of that name has one; type the key'
                )
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n", problems


TYPED_KEY = "(a key you typed: type it again)"
TYPED_URL_PARTS = " (+ hidden parts you typed: type the whole URL again)"
_JSON_STRING = r'"((?:[^"\\]|\\.)*)"'
_KEY_FIELD = re.compile(r'("key"\s*:\s*)' + _JSON_STRING)
_URL_FIELD = re.compile(r'("url"\s*:\s*)' + _JSON_STRING)


def without_typed_secrets(text: str) -> str:
    """The owner's text (JSON or not, say a merge with conflict markers) with every key that is not a
    placeholder, and every URL with hidden parts, replaced by TYPED_* placeholders; formatting kept."""

    def key(m: re.Match[str]) -> str:
        value = _decoded(m.group(2))
        if not value or value in (HIDDEN_KEY, TYPED_KEY):
            return m.group(0)
        return m.group(1) + json.dumps(TYPED_KEY)

    def url(m: re.Match[str]) -> str:
        value = _decoded(m.group(2))
        if value.endswith((HIDDEN_URL_PARTS, TYPED_URL_PARTS)) or not _url_hides(value):
            return m.group(0)
        return m.group(1) + json.dumps(mask_url(value) + TYPED_URL_PARTS, ensure_ascii=False)

    return _URL_FIELD.sub(url, _KEY_FIELD.sub(key, text))


def _decoded(body: str) -> str:
    try:
        return str(json.loads(f'"{body}"'))
    except ValueError:
        return body


def _stored(af: AgentsFile) -> list[Any]:
    """The file's entries as stored; [] for a missing or unreadable file."""
    try:
        data = json.loads(af.text or "[]")
    except ValueError:
        return []
    return data if isinstance(data, list) else []
