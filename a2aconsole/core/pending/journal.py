"""`pending.json`'s journal, `pending.journal` beside it: a send's record and its removal, one line each.

A send's record (issue 11: written when the agent returns the task id, removed when the answer goes back)
would cost two rewrites of the whole file per send, and a rewrite allocates a new file (~0.2 ms on ext4
before any fsync, more under load). A commit that only adds or removes records and asks for no fsync
(`durable=False`: a send's record) is appended to the journal instead, one JSON line per change:
`{"add": <record>}` or `{"remove": "<watchId>"}`. The records are the file's with the journal applied in
order; every reader (`pending.read`) applies it.

Any other commit folds the journal into the file: it appends `{"fold": "<version of the new file>"}`
(fsynced for a durable commit), writes the file (temp, rename), then empties the journal. A reader that
meets a fold line naming the file's current version skips the lines before it (already in the file: the
writer died before emptying the journal); one naming another version is void (the writer died before the
rename). A line cut short by a crash is not JSON and is skipped; the next commit folds such a journal. Once
the journal passes JOURNAL_LIMIT bytes it is emptied (its lines cancel out: every send's add met its
remove) or folded (`pending_store.py`).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from a2aconsole.core.files import version_of
from a2aconsole.core.pending.changes import Op, PendingTx
from a2aconsole.core.pending.records import WatchRecord, record_problem

JOURNAL_LIMIT = 32 * 1024


# one encoder for every line: `json.dumps` with options builds a new one per call (a share of a send's cost)
_LINE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def line(op: Op) -> bytes:
    kind, value = op
    if kind == "remove":  # a string alone is encoded at once; a dict sets up an encoder for each call
        return ('{"remove":' + _LINE.encode(value) + "}\n").encode()
    return _LINE.encode({"add": value.to_json()}).encode() + b"\n"


def journal_ops(data: bytes, version: Callable[[], str]) -> tuple[list[Op], bool, bool]:
    """The changes the journal lines `data` make to the file whose version `version()` gives (asked only when a
    fold line is met); whether the journal needs folding (a fold line, a line cut short or unreadable); and
    whether the lines before `data` are void (a fold line naming that version: they are in the file)."""
    ops: list[Op] = []
    dirty = not data.endswith(b"\n")
    reset = False
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            dirty = True
            continue
        if not isinstance(entry, dict):
            dirty = True
        elif "fold" in entry:
            dirty = True
            if entry["fold"] == version():  # the lines before it are in the file
                ops, reset = [], True
        elif isinstance(entry.get("add"), dict) and record_problem(entry["add"]) is None:
            ops.append(("add", WatchRecord.from_json(entry["add"])))
        elif isinstance(entry.get("remove"), str):
            ops.append(("remove", entry["remove"]))
        else:
            dirty = True
    return ops, dirty, reset


def with_journal(records: list[WatchRecord], journal: bytes | None, pending: bytes | None) -> list[WatchRecord]:
    """`records` (parsed from the bytes `pending`) with the journal's changes applied."""
    if not journal:
        return records
    ops, _, _ = journal_ops(journal, lambda: version_of(pending))
    if not ops:
        return records
    tx = PendingTx(records, {r.watch_id: r for r in records})
    tx.apply(ops)
    return list(tx.records)
