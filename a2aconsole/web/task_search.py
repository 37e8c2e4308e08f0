"""Free text on the Tasks page: a word is found in a task's ids or what was said (sent, latest, result), any case.

A word without whitespace is looked for in `TaskRecord.search_words` (each word of those texts once, lower
case: `task_index.search_words`), a fraction of the texts, indexed (migration 0009: on SQLite with state and
agent, so such a search and its count read that index instead of the wide rows; on PostgreSQL a pg_trgm index,
when the extension can be created). A word
few tasks have is turned into their ids first, so the page and its count read those rows only; a common word
is matched row by row (a page of 25 is found in the first rows read). A quoted phrase with spaces is narrowed
by its words, then matched in the texts themselves.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from a2aconsole.web.models import TaskRecord
from a2aconsole.web.task_index import SEARCHED

FEW = 500  # tasks with a word, at most, for which the search goes by their ids
INDEXED = ("agent", "target", "source")  # filter keys whose column an index leads with (`state`: lower case)


def key_filter(key: str, value: str) -> Q:
    """`key:value` (value lower case) in any case. A state is stored lower case: an exact match, by its index.
    An agent or chat: the names it has in any case (one index scan), then an exact match the index serves; a
    case-insensitive comparison reads every row instead."""

    if key == "state":
        return Q(state=value)
    if key in INDEXED:
        names = TaskRecord.objects.order_by().values_list(key, flat=True).distinct()
        return Q(**{f"{key}__in": [n for n in names if n.lower() == value]})
    return Q(**{f"{key}__iexact": value})


def word_filter(term: str, within: QuerySet[Any] | None = None) -> Q:
    """The tasks whose ids or texts contain `term` (case-insensitive). `within`: the tasks the search's other
    terms leave (its filters, dates): the ids are looked for among those only (`agent:poet state:completed
    lisbon` read every task's words for "lisbon" first, a tenth of them, then matched row by row anyway)."""

    words = term.lower().split()
    hit = Q()
    for word in words:
        having = (within if within is not None else TaskRecord.objects).filter(search_words__contains=word)
        ids = list(having.order_by().values_list("id", flat=True)[: FEW + 1])  # the index alone, not the rows
        hit &= Q(id__in=ids) if len(ids) <= FEW else Q(search_words__contains=word)
    if len(words) > 1:  # a phrase: its words are there; is the phrase itself?
        phrase = Q()
        for name in SEARCHED:
            phrase |= Q(**{f"{name}__icontains": term})
        hit &= phrase
    return hit
