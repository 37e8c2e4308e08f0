"""Fragments packed into WebSocket frames that stay well under daphne's 1 MiB message limit.

A frame over the limit makes daphne close the socket ("message too large"), so a tab never gets anything. Each
fragment is a whole element (a table row, a batch of rows, a badge): fragments are never split, and one that
alone passes the budget is dropped with a log line (the page's own HTTP render still shows it).

htmx parses a frame as one <template>: its first element decides how the rest is parsed, and a <tbody> or <tr>
after a <div> is silently dropped (so are a div's tags after a row). A frame therefore holds fragments of one
kind only: rows (<tr>), row batches (<tbody>), or anything else.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator

log = logging.getLogger(__name__)

FRAME_BYTES = 256 * 1024
ROWS_PER_FRAGMENT = 100  # table rows per appended batch: ~150 KB, one frame each


def pack(fragments: Iterable[str], budget: int = FRAME_BYTES) -> Iterator[str]:
    """Consecutive fragments joined into frames of at most `budget` bytes (UTF-8), in order."""
    parts: list[str] = []
    size = 0
    kind = ""
    for f in fragments:
        n = len(f.encode())
        if n > budget:
            log.warning("a live fragment of %d bytes is over the frame budget of %d: not sent", n, budget)
            continue
        if parts and (size + n > budget or _kind(f) != kind):
            yield "".join(parts)
            parts, size = [], 0
        parts.append(f)
        size += n
        kind = _kind(f)
    if parts:
        yield "".join(parts)


def _kind(fragment: str) -> str:
    head = fragment.lstrip()[:6].lower()
    return "tbody" if head.startswith("<tbody") else "tr" if head.startswith("<tr") else "flow"


def batches(items: list, size: int) -> Iterator[list]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
