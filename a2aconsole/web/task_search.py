"""Free text on the Tasks page: a word is found in a task's ids or what was said (sent, latest, result), any case.

A word without whitespace is looked for in `TaskRecord.search_words` (each word of those texts once, lower
case: `task_index.search_words`) through the database's own index (`task_fts`: SQLite FTS5 trigram, PostgreSQL
pg_trgm). By how many tasks have it: a word up to `MANY` tasks have is read through the index, then the page
and its count are read among those tasks; a word more have is matched row by row in the page's order (a page of
25 is found in the first few thousand rows, the count stops at `task_pages.COUNT_CAP`). A word the index cannot
look up (under 3 characters) and a quoted phrase none of whose words is rare are matched row by row too, among
the newest `SCAN` tasks the other terms leave (a notice says so): a row-by-row search of a million rows for a
word no task has would read them all. A quoted phrase is narrowed by its words, then matched in the texts.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection
from django.db.models import Q

from a2aconsole.web import task_fts
from a2aconsole.web.models import TaskRecord
from a2aconsole.web.task_index import SEARCHED

MANY = 20_000  # tasks with a word, at most, for which the search reads the index's ids (a few ms)
SCAN = 20_000  # newest tasks a search no index can serve looks among
INDEXED = ("agent", "target", "source")  # filter keys whose column an index leads with (`state`: lower case)


def key_filter(key: str, value: str) -> Q:
    """`key:value` (value lower case) in any case. A state is stored lower case: an exact match, by its index.
    An agent or chat: the names it has in any case (one index scan), then an exact match the index serves; a
    case-insensitive comparison reads every row instead."""

    if key == "state":
        return Q(state=value)
    if key in INDEXED:
        return Q(**{f"{key}__in": [n for n in names(key) if n.lower() == value]})
    return Q(**{f"{key}__iexact": value})


def names(column: str) -> list[str]:
    """The distinct values of an `INDEXED` column, one index seek each (each next one past the last): a
    `DISTINCT` reads every row's entry, 50 ms on SQLite and more on PostgreSQL (which has no skip scan) at a
    million tasks, for a few dozen agents or chats."""
    assert column in INDEXED, column
    table = TaskRecord._meta.db_table
    sql = (
        f"WITH RECURSIVE seen(name) AS (SELECT min({column}) FROM {table} UNION ALL"
        f" SELECT (SELECT min({column}) FROM {table} WHERE {column} > seen.name) FROM seen"
        " WHERE seen.name IS NOT NULL) SELECT name FROM seen WHERE name IS NOT NULL"
    )
    with connection.cursor() as c:
        c.execute(sql)
        return [row[0] for row in c.fetchall()]


@dataclass
class Words:
    """What the free words of a search ask: the rows that have them, and whether none could be looked up in an
    index so the search must be bounded (`bounded`, the words that made it so)."""

    hit: Q
    bounded: list[str]


def word_filter(term: str) -> Words:
    """The tasks whose ids or texts contain `term` (a word, or a phrase with spaces), case-insensitive."""
    words = term.lower().split()
    hit, rare = Q(), False
    for word in words:
        n = task_fts.how_many(word, MANY + 1)
        if n is not None and n <= MANY:
            hit &= task_fts.having(word)
            rare = True
        else:
            hit &= task_fts.scanned(word)
    short = [w for w in words if len(w) < task_fts.SHORTEST]
    if len(words) > 1:  # a phrase: its words are there; is the phrase itself?
        phrase = Q()
        for name in SEARCHED:
            phrase |= Q(**{f"{name}__icontains": term})
        hit &= phrase
        return Words(hit, [] if rare else [term])
    return Words(hit, short)
