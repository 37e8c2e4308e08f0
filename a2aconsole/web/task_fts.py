"""Free text through the database's own index: which tasks' words (`TaskRecord.search_words`) hold a word.

SQLite: an FTS5 table with the trigram tokenizer over `search_words` (any substring of 3 characters or more,
any case), an external-content table kept in step by triggers, so it stores the index only, not a second copy
of the words. Migration 0016 creates and fills it; `ensure` (after every migrate) makes it again where it is
missing, e.g. a table rebuilt by a later migration dropped its triggers. PostgreSQL: the pg_trgm GIN index of
migration 0009 serves `LIKE '%word%'`. A trigram index cannot look up a word under 3 characters (`SHORTEST`).
"""

from __future__ import annotations

import json
from typing import Any

from django.db import connection
from django.db.models import Q, Value
from django.db.models.expressions import RawSQL
from django.db.models.functions import StrIndex
from django.db.models.lookups import GreaterThan

TABLE = "web_taskrecord_fts"
SHORTEST = 3  # characters: a trigram index finds nothing shorter
CREATE = [
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {TABLE} USING fts5(search_words, content='web_taskrecord',"
    " content_rowid='id', tokenize='trigram')",
    f"CREATE TRIGGER IF NOT EXISTS {TABLE}_insert AFTER INSERT ON web_taskrecord BEGIN"
    f" INSERT INTO {TABLE}(rowid, search_words) VALUES (new.id, new.search_words); END",
    f"CREATE TRIGGER IF NOT EXISTS {TABLE}_delete AFTER DELETE ON web_taskrecord BEGIN"
    f" INSERT INTO {TABLE}({TABLE}, rowid, search_words) VALUES ('delete', old.id, old.search_words); END",
    # a row's words are written at each event, mostly the same: the index is touched only when they change
    f"CREATE TRIGGER IF NOT EXISTS {TABLE}_update AFTER UPDATE OF search_words ON web_taskrecord"
    " WHEN old.search_words IS NOT new.search_words BEGIN"
    f" INSERT INTO {TABLE}({TABLE}, rowid, search_words) VALUES ('delete', old.id, old.search_words);"
    f" INSERT INTO {TABLE}(rowid, search_words) VALUES (new.id, new.search_words); END",
]
FILL = f"INSERT INTO {TABLE}({TABLE}) VALUES ('rebuild')"
DROP = [f"DROP TRIGGER IF EXISTS {TABLE}_{t}" for t in ("insert", "delete", "update")] + [
    f"DROP TABLE IF EXISTS {TABLE}"
]
PARTS = {TABLE, f"{TABLE}_insert", f"{TABLE}_delete", f"{TABLE}_update"}


def install(schema_editor: Any) -> None:
    """Create the SQLite index and fill it from the rows there (a migration's step; nothing on other databases)."""
    if schema_editor.connection.vendor != "sqlite":
        return
    for sql in CREATE:
        schema_editor.execute(sql)
    schema_editor.execute(FILL)


def uninstall(schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "sqlite":
        for sql in DROP:
            schema_editor.execute(sql)


def ensure(using: str = "default", **_: Any) -> bool:
    """After a migrate (`post_migrate`): make the SQLite index where a part of it is missing and the task table
    is there. True when it was made."""
    from django.db import connections

    conn = connections[using]
    if conn.vendor != "sqlite":
        return False
    with conn.cursor() as c:
        names = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')")}
        if "web_taskrecord" not in names or names >= PARTS:
            return False
        for sql in DROP + CREATE + [FILL]:  # the table too: one left without its triggers has missed changes
            c.execute(sql)
    return True


def _match(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'  # a string, not FTS syntax: the word's characters in a row


def how_many(word: str, limit: int) -> int | None:
    """How many tasks' words hold `word` (lower case), counted through the index up to `limit`; None when no
    index can look it up (too short, or PostgreSQL without pg_trgm: then it is matched row by row).

    PostgreSQL: a word its statistics (a sample of the rows) put in `limit` tasks or more is taken as `limit`,
    not counted: a count to `limit` reads `limit` / (the word's share) rows (140,000 for a word in one task in
    seven, 200 ms at a million tasks), or through the index every posting of its trigrams. A word it puts in
    fewer is counted through the index, which for a rare word is what the planner chooses."""
    if len(word) < SHORTEST:
        return None
    with connection.cursor() as c:
        if connection.vendor == "sqlite":
            sql = f"SELECT count(*) FROM (SELECT rowid FROM {TABLE} WHERE {TABLE} MATCH %s LIMIT %s)"
            c.execute(sql, [_match(word), limit])
        elif connection.vendor == "postgresql" and _trigram_index(c):
            like = "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            c.execute("EXPLAIN (FORMAT JSON) SELECT 1 FROM web_taskrecord WHERE search_words LIKE %s", [like])
            plan = c.fetchone()[0]
            plan = json.loads(plan) if isinstance(plan, str) else plan
            if plan[0]["Plan"]["Plan Rows"] >= limit:
                return limit
            c.execute(
                "SELECT count(*) FROM (SELECT 1 FROM web_taskrecord WHERE search_words LIKE %s LIMIT %s) t",
                [like, limit],
            )
        else:
            return None
        return int(c.fetchone()[0])


def _trigram_index(c: Any) -> bool:
    c.execute("SELECT 1 FROM pg_indexes WHERE indexname = 'task_record_search_words'")
    return c.fetchone() is not None


def having(word: str) -> Q:
    """The tasks whose words hold `word` (lower case, `SHORTEST` or more), through the index: on SQLite the ids
    the FTS table gives, on PostgreSQL the `LIKE` its GIN index serves."""
    if connection.vendor == "sqlite":
        return Q(id__in=RawSQL(f"SELECT rowid FROM {TABLE} WHERE {TABLE} MATCH %s", [_match(word)]))
    return Q(search_words__contains=word)


def scanned(word: str) -> Q:
    """The tasks whose words hold `word` (lower case), matched row by row in the rows the rest of the query
    reads (`strpos`, `instr`): PostgreSQL plans a `LIKE` through the trigram index whenever it can, and that
    index's scan for a common word reads most of it (150-300 ms at a million tasks) when a page needs a few
    thousand rows."""
    return Q(GreaterThan(StrIndex("search_words", Value(word)), 0))
