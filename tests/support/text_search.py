"""Free-text cases of the Tasks page, the same on every database: run in the test's process (SQLite) or as a script
over another database (`python -m tests.support.text_search`, PostgreSQL from `DATABASE_URL`), printing what each
search found as JSON. `MANY` and `SCAN` are made small so a few tasks show the common and bounded ways."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from typing import Any

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
TASKS = [  # task id, what was sent, the result; oldest first, a minute apart
    ("t-lis", "plan a trip", "Here is the itinerary for LISBON, day by day. " * 5),
    ("t-mu", "summary please", "Die Übersicht für München"),
    ("t-r1", "the weekly report", "weekly report: sales up"),
    ("t-r2", "the weekly report", "report done, weekly numbers attached"),
    ("t-r3", "the weekly report", "weekly report: costs down"),
    ("t-r4", "the weekly report", "weekly report: all quiet"),
    ("t-go", "go", "it is ok"),
    ("t-upd", "arrange travel", "searching flights"),
]
CASES = {  # what each search finds, newest first, and whether it says it was bounded
    "lisbon": (["t-lis"], False),
    "isbo": (["t-lis"], False),  # inside a word, through the index
    "ÜBERSICHT": (["t-mu"], False),  # any case, not only ASCII
    "münch": (["t-mu"], False),
    '"for lisbon"': (["t-lis"], False),
    '"lisbon for"': ([], False),
    "report": (["t-r4", "t-r3", "t-r2", "t-r1"], False),  # in more than MANY tasks: row by row
    "weekly sales": (["t-r1"], False),  # a common word and a rare one
    '"weekly report"': (["t-r4", "t-r3"], True),  # common words only: the newest SCAN tasks
    '"report done"': (["t-r2"], False),  # "done": a rare word, through the index
    "ok": (["t-go"], True),  # under 3 characters: bounded too
    "ok it": (["t-go"], True),
    "ok lisbon": ([], False),
    "hotels": (["t-upd"], False),  # the row's later words
    "flights": ([], False),  # and its old ones gone from the index
    "source:push report": (["t-r3"], False),  # source: stays an exact filter
    "agent:bot isbo": (["t-lis"], False),
    "nowhere": ([], False),
}
MANY, SCAN = 3, 4


def load() -> None:
    """The tasks stored as the console's sink stores them (events, rows, the index), one text changed, one gone."""
    from a2aconsole.core.events import Event
    from a2aconsole.web.broadcast import _store
    from a2aconsole.web.models import TaskRecord

    def emit(task_id: str, kind: str, at: datetime, state: str = "", text: str = "", **more: Any) -> None:
        fields = {"agent": "bot", "target": "console", "context_id": f"ctx-{task_id}", **more}
        _store(Event(kind=kind, workspace="/w", task_id=task_id, at=at, state=state, text=text, **fields))

    for i, (task_id, sent, result) in enumerate(TASKS):
        at = T0 + timedelta(minutes=i)
        emit(task_id, "sent", at, text=sent)
        if task_id == "t-r3":
            emit(task_id, "watch.armed", at, data={"source": "push", "watchId": "w3"})
        kind, state = ("state", "working") if task_id == "t-upd" else ("result", "completed")
        emit(task_id, kind, at + timedelta(seconds=30), state, result)
    emit("t-upd", "state", T0 + timedelta(hours=1), "working", "searching hotels")
    emit("t-gone", "result", T0, "completed", "lisbon again")
    TaskRecord.objects.filter(task_id="t-gone").delete()


def results() -> dict[str, Any]:
    """What each search of CASES finds (task ids, newest first) and whether it said it was bounded."""
    from a2aconsole.web import task_search
    from a2aconsole.web.views import tasklist

    task_search.MANY, tasklist.SCAN = MANY, SCAN
    found = {}
    for q in CASES:
        ctx = tasklist.listing(q)
        found[q] = ([r["task_id"] for r in ctx["rows"]], any("look further back" in e for e in ctx["errors"]))
    return found


if __name__ == "__main__":
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    load()
    print(json.dumps({"vendor": os.environ.get("DATABASE_URL", "sqlite")[:8], "found": results()}))
