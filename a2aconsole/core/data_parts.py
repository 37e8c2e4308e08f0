"""Data parts (structured JSON an agent sends, or the owner answers with), bounded both ways.

An agent's data part is kept whole in the tool's outcome (within its text budget, else saved as a `.json` file);
an event keeps a preview of each (`event_data_parts`): at most MAX_DEPTH levels, MAX_ITEMS members of each list
or object and PREVIEW_CHARS of each string, about MAX_EVENT_CHARS in all, with what was left out counted and the
part marked `cut`, so a page never grows with what an agent sent and a cut form is never offered as a form.
The owner's data answer (`send`'s `data`) is a JSON object of at most MAX_DATA bytes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from a2aconsole.core.errors import ToolError

MAX_DATA = 64 * 1024  # bytes of a send's data (a JSON object) as UTF-8 JSON
MAX_DATA_PARTS = 20  # data parts an event keeps; the rest are counted
MAX_EVENT_CHARS = 32 * 1024  # characters of strings and keys the data parts of one event keep
MAX_DEPTH = 12  # levels of nesting kept
MAX_ITEMS = 200  # members of one list or object kept
PREVIEW_CHARS = 4 * 1024  # characters of one string kept
KEY_CHARS = 200  # characters of one key kept


def first_chars(text: str, keep: int) -> str:
    return text[:keep]


class JsonCut:
    """One walk over a JSON value keeping about `budget` characters of strings and keys: each string to
    `string_chars`, each key to KEY_CHARS, then lists and objects end with a count of what is left out;
    `max_depth` and `max_items` (None: no cap) bound nesting and members too. `shortened` says whether anything
    was left out. `cut(text, keep)` makes the kept part of a string or key (`Scrubber.cut` scrubs just that)."""

    def __init__(
        self,
        budget: int,
        *,
        string_chars: int = PREVIEW_CHARS,
        max_depth: int | None = None,
        max_items: int | None = None,
        cut: Callable[[str, int], str] = first_chars,
    ) -> None:
        self.left = budget
        self.string_chars, self.max_depth, self.max_items, self._cut = string_chars, max_depth, max_items, cut
        self.shortened = False

    def _full(self, members: int) -> bool:
        return (self.max_items is not None and members >= self.max_items) or self.left <= 0

    def walk(self, v: Any, depth: int = 0) -> Any:
        if isinstance(v, str):
            keep = max(0, min(len(v), self.string_chars, self.left))
            self.left -= keep
            if keep == len(v):
                return self._cut(v, keep)
            self.shortened = True
            return f"{self._cut(v, keep)}… ({len(v) - keep:,} more characters)"
        if not isinstance(v, (list, dict)):
            return v if v is None or isinstance(v, (bool, int, float)) else str(v)[: self.string_chars]
        if self.max_depth is not None and depth >= self.max_depth:
            self.shortened = True
            return f"… (nested deeper than {self.max_depth} levels)"
        if isinstance(v, list):
            out: list[Any] = []
            for i, x in enumerate(v):
                if self._full(i):
                    self.shortened = True
                    out.append(f"… ({len(v) - i:,} more items)")
                    break
                out.append(self.walk(x, depth + 1))
            return out
        obj: dict[str, Any] = {}
        for i, (k, x) in enumerate(v.items()):
            if self._full(i):
                self.shortened = True
                obj["…"] = f"{len(v) - i:,} more fields"
                break
            key = self._cut(str(k), KEY_CHARS)
            self.left -= len(key)
            obj[key] = self.walk(x, depth + 1)
        return obj


def event_data_parts(outcome: dict[str, Any]) -> tuple[list[dict[str, Any]], int]:
    """The data parts of an outcome as an event keeps them (`{"data", "in"[, "cut"]}`, or `{"file", "chars",
    "in"}` for one saved as a file), the status message's first, and how many more there were."""
    found: list[tuple[str, dict[str, Any]]] = [("message", p) for p in outcome.get("messageData") or ()]
    for n, art in enumerate(outcome.get("artifacts") or (), start=1):
        found += [(str(art.get("name") or f"artifact {n}"), p) for p in art.get("parts") or ()]
    found = [(where, p) for where, p in found if "data" in p or "dataFile" in p]
    kept: list[dict[str, Any]] = []
    budget = MAX_EVENT_CHARS
    for where, p in found[:MAX_DATA_PARTS]:
        if "dataFile" in p:
            kept.append({"file": p["dataFile"], "chars": p.get("chars", 0), "in": where})
            continue
        b = JsonCut(budget, max_depth=MAX_DEPTH, max_items=MAX_ITEMS)
        entry: dict[str, Any] = {"data": b.walk(p["data"]), "in": where}
        budget = max(0, b.left)
        if b.shortened:
            entry["cut"] = True
        kept.append(entry)
    return kept, max(0, len(found) - MAX_DATA_PARTS)


def send_data(value: Any, cap: int = MAX_DATA) -> dict[str, Any] | None:
    """`send`'s `data` argument checked: a JSON object of at most `cap` bytes as JSON (None: no data)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ToolError("data must be a JSON object (the values of a form, for one)")
    try:
        size = len(json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8"))
    except (TypeError, ValueError, UnicodeEncodeError) as e:
        raise ToolError(f"data must be plain JSON ({type(e).__name__}: {str(e)[:200]})") from None
    if size > cap:
        raise ToolError(f"data must be at most {cap} bytes as JSON (it has {size})")
    return value
